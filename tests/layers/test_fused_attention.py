"""Fused attention (`keras.ops.dot_product_attention`) gives the official numbers.

The official graph adds -10000 to the scores of padded keys; the fused path
masks them with a boolean mask. Wherever a row has a real key (always, with
`[CLS]`) the two agree: exp(-10000) is 0 in float32. JAX and torch run
`fused_attention_check.py` in their own process, TensorFlow (the tests'
backend) here, with the same weights on both paths.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from albert_test_case import fast_xla_flags

from albert_keras.layers import albert_attention
from albert_keras.layers.accelerator import fused_attention_is_faster
from albert_keras.layers.albert_attention import AlbertAttention

SCRIPT = os.path.join(os.path.dirname(__file__), "fused_attention_check.py")


def _differences_here(monkeypatch):
    """`fused_attention_check.differences()` in this (TensorFlow) process;
    the attention path it forces is restored afterwards."""
    import keras

    assert keras.backend.backend() == "tensorflow"
    path = albert_attention.FORCE_ATTENTION_PATH
    monkeypatch.setattr(albert_attention, "FORCE_ATTENTION_PATH", path)
    spec = importlib.util.spec_from_file_location("fused_attention_check", SCRIPT)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    return check.differences()


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_fused_and_explicit_attention_agree(backend, monkeypatch):
    if backend == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed (pip install torch)")
    if backend == "tensorflow":  # the tests' backend: no fresh Python needed
        diffs = _differences_here(monkeypatch)
    else:
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        env["XLA_FLAGS"] = fast_xla_flags()
        result = subprocess.run(
            [sys.executable, SCRIPT], env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr[-3000:]
        diffs = json.loads(result.stdout)
    assert diffs["backend"] == backend
    for case in ("no_padding", "padding", "padding_query_positions"):
        assert diffs[case + "_scale"] > 0.5  # outputs of size 1, not zeros
        assert diffs[case] < 1e-6, (case, diffs)
    if backend == "jax":
        assert diffs["gradient"] < 1e-5, diffs


def test_the_cpu_takes_the_explicit_path(monkeypatch):
    calls = []
    monkeypatch.setattr(
        albert_attention.ops,
        "dot_product_attention",
        lambda *args, **kwargs: calls.append(1),
    )
    assert not fused_attention_is_faster()  # no accelerator here
    layer = AlbertAttention(16, 2)
    layer(np.ones((1, 4, 16), "float32"), padding_mask=np.ones((1, 4)))
    assert calls == []


def test_attention_dropout_in_training_takes_the_explicit_path(monkeypatch):
    monkeypatch.setattr(albert_attention, "FORCE_ATTENTION_PATH", "fused")
    layer = AlbertAttention(16, 2, attention_dropout=0.5)
    assert layer._fused_path(training=False, key_length=6)
    assert not layer._fused_path(training=True, key_length=6)
    x = np.random.default_rng(0).normal(size=(2, 6, 16)).astype("float32")
    dropped = np.asarray(layer(x, padding_mask=np.ones((2, 6)), training=True))
    kept = np.asarray(layer(x, padding_mask=np.ones((2, 6)), training=False))
    assert np.max(np.abs(dropped - kept)) > 1e-3  # the dropout did run


def test_odd_or_unknown_key_lengths_take_the_explicit_path(monkeypatch):
    monkeypatch.setattr(albert_attention, "FORCE_ATTENTION_PATH", "fused")
    layer = AlbertAttention(16, 2)
    assert layer._fused_path(training=True, key_length=128)
    assert not layer._fused_path(training=True, key_length=127)
    assert not layer._fused_path(training=False, key_length=None)
