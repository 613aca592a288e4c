"""Which process of a multi-process job keeps the run's files (no TensorFlow needed).

A process is the chief when it is alone, the chief (or worker 0 of a cluster
without one) of a `TF_CONFIG` cluster, as `MultiWorkerMirroredStrategy`
defines it, or process 0 of a JAX job started with `jax.distributed`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys


def _tf_config_task() -> tuple[str | None, int, dict]:
    """(task type, task index, cluster) of `TF_CONFIG` (None, 0, {} without it)."""
    try:
        tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    except json.JSONDecodeError as error:
        raise ValueError(
            f"TF_CONFIG is not valid JSON ({error}): set it to "
            '{"cluster": {...}, "task": {"type": "worker", "index": 0}} or unset it.'
        ) from error
    task = tf_config.get("task") or {}
    return task.get("type"), int(task.get("index") or 0), tf_config.get("cluster") or {}


def _jax_process() -> tuple[int, int]:
    """(process index, process count) of a JAX job; (0, 1) when JAX is not in use."""
    jax = sys.modules.get("jax")
    if jax is None:
        return 0, 1
    return jax.process_index(), jax.process_count()


def is_chief() -> bool:
    """Whether this process keeps the run's files (see the module docstring).

    Example:
    >>> is_chief()  # no TF_CONFIG, one process
    True
    """
    task_type, index, cluster = _tf_config_task()
    if task_type not in (None, "", "chief"):
        has_chief = "chief" in cluster
        return task_type == "worker" and index == 0 and not has_chief
    return _jax_process()[0] == 0


def worker_private_dir(directory: str) -> str:
    """Where this process writes files that only the chief keeps.

    Under `MultiWorkerMirroredStrategy` (or a multi-process JAX job) every
    process runs the same callbacks, but only the chief's files are the run's.
    The chief (or a process alone) gets `directory`; another task gets
    `directory/.{task_type}-{task_id}` (`.process-{i}` under JAX), the same path
    on every restart, so a killed worker's files are overwritten when the job
    resumes. Remove it with `remove_worker_private_dir`.

    Args:
        directory: the run's folder.

    Example:
    >>> worker_private_dir("/tmp/run")  # no TF_CONFIG: the chief
    '/tmp/run'
    """
    if is_chief():
        return directory
    task_type, index, _ = _tf_config_task()
    if task_type:
        return os.path.join(directory, f".{task_type}-{index}")
    return os.path.join(directory, f".process-{_jax_process()[0]}")


def remove_worker_private_dir(directory: str) -> None:
    """Removes `worker_private_dir(directory)` unless this process is the chief.

    Args:
        directory: the run's folder.
    """
    private = worker_private_dir(directory)
    if private == directory:
        return
    if "://" in private:  # gs:// and other TensorFlow file systems
        import tensorflow as tf

        if tf.io.gfile.exists(private):
            tf.io.gfile.rmtree(private)
    elif os.path.isdir(private):
        shutil.rmtree(private)


def is_alone() -> bool:
    """Whether this process runs alone: no `TF_CONFIG` task, one JAX process.

    Example:
    >>> is_alone()
    True
    """
    return _tf_config_task()[0] in (None, "") and _jax_process()[1] == 1
