"""FastLamb against `keras.optimizers.Lamb` (the reference) and float64 sums."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras.training import create_optimizer, fast_lamb
from albert_keras.training.fast_lamb import FastLamb, _compiled_by_xla, square_sum

# A 3000 x 128 table and a 5000 vector take the matrix-product sums; the
# others are below the size where a plain reduction is kept.
SHAPES = {"table": (3000, 128), "vector_bias": (5000,), "small": (16, 8)}


def run(optimizer, steps, jit_compile, seed=0):
    """`steps` updates of fresh variables with fixed random gradients.

    Returns the variables' initial and final values.
    """
    rng = np.random.default_rng(seed)
    variables = [
        keras.Variable(rng.standard_normal(shape).astype("float32"), name=name)
        for name, shape in SHAPES.items()
    ]
    initial = [v.numpy() for v in variables]
    grads = [
        [tf.constant(rng.standard_normal(v.shape).astype("float32")) for v in variables]
        for _ in range(steps)
    ]
    optimizer.build(variables)

    @tf.function(jit_compile=jit_compile)
    def step(g):
        optimizer.apply(g, variables)

    for g in grads:
        step(g)
    return initial, [v.numpy() for v in variables]


@pytest.mark.parametrize("jit_compile", [True, False])
def test_updates_equal_keras_lamb(jit_compile, monkeypatch):
    modes = []

    def recording_square_sum(x, use_matmul=True):
        modes.append(use_matmul)
        return square_sum(x, use_matmul)

    monkeypatch.setattr(fast_lamb, "square_sum", recording_square_sum)
    kwargs = dict(
        learning_rate=0.01, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
    )
    reference = keras.optimizers.Lamb(**kwargs)
    reference.exclude_from_weight_decay(var_names=["bias"])
    fast = FastLamb(**kwargs)
    fast.exclude_from_weight_decay(var_names=["bias"])
    initial, expected = run(reference, 6, jit_compile)
    _, got = run(fast, 6, jit_compile)
    # 3 clipping sums + 2 trust-ratio norms for each of the 3 variables.
    assert modes == [jit_compile] * 9
    for name, i, e, g in zip(SHAPES, initial, expected, got, strict=True):
        moved = np.max(np.abs(e - i))
        assert moved > 1e-3, name  # the updates did something
        diff = np.max(np.abs(e - g))
        if jit_compile:
            assert diff < 1e-6, (name, diff)
        else:  # without XLA the very same operations run
            assert diff == 0.0, (name, diff)


def test_official_update_under_xla_equals_eager():
    # The official update (its oracle test runs eagerly) compiles by XLA, with
    # the matrix-product sums, to the same values.
    results = []
    for jit_compile in (False, True):
        optimizer = FastLamb(
            learning_rate=0.01,
            weight_decay=0.01,
            epsilon=1e-6,
            global_clipnorm=1.0,
            official_update=True,
        )
        optimizer.exclude_from_weight_decay(var_names=["bias"])
        initial, got = run(optimizer, 6, jit_compile)
        results.append(got)
    for name, i, e, g in zip(SHAPES, initial, *results, strict=True):
        assert np.max(np.abs(e - i)) > 1e-3, name
        assert np.max(np.abs(e - g)) < 1e-6, name


def test_square_sum_by_matmul_under_xla_equals_float64_sum():
    seen = []

    @tf.function(jit_compile=True, reduce_retracing=False)
    def both_sums(t):
        seen.append(_compiled_by_xla())
        return square_sum(t), tf.reduce_sum(tf.square(t))

    rng = np.random.default_rng(1)
    for shape in [(30000, 128), (3000, 64), (30000,), (7, 700, 96)]:
        x = rng.standard_normal(shape).astype("float32") * 3
        exact = float(np.sum(x.astype("float64") ** 2))
        by_matmul, by_reduce = (float(v) for v in both_sums(tf.constant(x)))
        assert abs(by_matmul - exact) / exact < 2e-6, shape
        assert abs(by_reduce - exact) / exact < 2e-6, shape
    assert seen == [True] * 4  # traced once per shape, each time under XLA


def test_matmul_sums_only_under_tensorflow_xla_on_cpu():
    assert not _compiled_by_xla()  # eager

    @tf.function
    def graph():
        return _compiled_by_xla()

    assert not bool(graph())
    optimizer = FastLamb(learning_rate=0.1)
    optimizer.build([keras.Variable(np.ones((64, 64), "float32"))])
    assert optimizer._use_matmul  # this machine has no GPU or TPU
    off = FastLamb(learning_rate=0.1, matmul_sums=False)
    off.build([keras.Variable(np.ones((64, 64), "float32"))])
    assert not off._use_matmul
    restored = FastLamb.from_config(off.get_config())
    assert restored.matmul_sums is False


def test_create_optimizer_gives_fast_lamb_with_the_official_settings():
    optimizer = create_optimizer("lamb", 1e-3, 100, 10)
    assert isinstance(optimizer, FastLamb)
    assert isinstance(optimizer, keras.optimizers.Lamb)
    assert optimizer.epsilon == 1e-6 and optimizer.global_clipnorm == 1.0
    assert optimizer.weight_decay == 0.01
