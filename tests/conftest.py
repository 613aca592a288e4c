"""Shared pytest setup: quiet TensorFlow, float32 by default, helpers importable."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def _share_the_cores():
    """Each pytest-xdist worker (and the Pythons it starts) gets its share of
    the cores: TensorFlow's op threads, OpenMP's (PyTorch) and XLA's CPU
    threads. Without this each worker's pools size themselves to every core,
    and with as many workers as cores their threads spin against each other.
    Variables set by the caller win.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    threads = max(1, (cores or os.cpu_count() or 1) // workers)
    if workers < 2 or threads > 1:
        return
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_multi_thread_eigen" not in flags:
        flags = f"{flags} --xla_cpu_multi_thread_eigen=false".strip()
        os.environ["XLA_FLAGS"] = flags


_share_the_cores()

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _float32_policy():
    """Each test starts in float32, whatever an earlier test set."""
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")
