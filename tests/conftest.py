"""Shared pytest setup: quiet TensorFlow, float32 by default, helpers importable."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

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
