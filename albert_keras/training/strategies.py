"""`tf.distribute` strategies by one flag: tpu, multi_worker, mirrored, one_device."""

from __future__ import annotations

import tensorflow as tf

# Re-exported: they moved to `worker_files` (no TensorFlow needed).
from albert_keras.training.worker_files import (  # noqa: F401
    is_chief,
    remove_worker_private_dir,
    worker_private_dir,
)

STRATEGIES = ("auto", "one_device", "mirrored", "multi_worker", "tpu")


def get_strategy(name: str = "auto", tpu: str | None = None):
    """Returns a `tf.distribute.Strategy`.

    Args:
        name: "auto" (mirrored over all GPUs if there are several, else the
            default strategy), "one_device", "mirrored" (all local GPUs, or the
            logical CPU devices when there are no GPUs), "multi_worker"
            (`MultiWorkerMirroredStrategy`, cluster from `TF_CONFIG`) or "tpu"
            (`TPUStrategy` through `TPUClusterResolver(tpu)`).
        tpu: TPU name or address for "tpu" ("" or "local" for a TPU VM).

    Example:
    >>> strategy = get_strategy("one_device")
    >>> strategy.num_replicas_in_sync
    1
    """
    if name not in STRATEGIES:
        raise ValueError(
            f"Unknown strategy. Received: {name!r}. Allowed: {', '.join(STRATEGIES)}"
        )
    if name == "tpu":
        return _tpu_strategy(tpu)
    if name == "multi_worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    gpus = tf.config.list_logical_devices("GPU")
    if name == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    if name == "one_device":
        return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
    if len(gpus) > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()


def _tpu_strategy(tpu):
    """`TPUStrategy` on the TPU `tpu` names; a clear error when none is reached."""
    target = tpu if tpu not in (None, "local") else ""
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=target)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except Exception as error:  # the resolver raises ValueError, URLError, ...
        where = f"TPU {tpu!r}" if target else "a local TPU (this is not a TPU VM)"
        raise RuntimeError(
            f"--strategy tpu could not reach {where}: {type(error).__name__}: "
            f"{error}. Pass --tpu NAME (the TPU's name or grpc:// address) or "
            "--tpu local on a TPU VM; without a TPU use --strategy auto."
        ) from error
    return tf.distribute.TPUStrategy(resolver)
