import time

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff

from albert_keras.layers import AlbertDropout


def _compiled(layer, jit):
    return tf.function(lambda x: layer(x, training=True), jit_compile=jit)


@pytest.mark.parametrize("jit", [True, False], ids=["xla", "graph"])
@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drops_rate_and_scales_the_rest(jit, rate):
    layer = AlbertDropout(rate, seed=7)
    x = np.random.default_rng(0).uniform(1.0, 2.0, (250, 4000)).astype("float32")
    step = _compiled(layer, jit)
    first, second = np.asarray(step(x)), np.asarray(step(x))
    for y in (first, second):
        kept = y != 0
        # 1e6 draws: the dropped fraction's standard error is below 5e-4.
        assert abs(1 - kept.mean() - rate) < 0.003
        assert max_abs_diff(y[kept], x[kept] / (1 - rate)) < 1e-6
    # A fresh mask per call, not one mask reused.
    assert 0.3 < ((first != 0) != (second != 0)).mean() / (2 * rate * (1 - rate)) < 3


def test_identity_when_not_training_or_rate_zero():
    x = np.random.default_rng(1).normal(size=(3, 50)).astype("float32")
    assert max_abs_diff(AlbertDropout(0.3)(x), x) == 0
    assert max_abs_diff(AlbertDropout(0.0)(x, training=True), x) == 0
    assert np.all(np.asarray(AlbertDropout(1.0)(x, training=True)) == 0)


def test_same_seed_same_masks_in_sequence():
    x = np.ones((8, 300), "float32")
    a, b = AlbertDropout(0.2, seed=11), AlbertDropout(0.2, seed=11)
    for _ in range(2):
        assert max_abs_diff(a(x, training=True), b(x, training=True)) == 0
    assert (
        max_abs_diff(a(x, training=True), AlbertDropout(0.2, seed=12)(x, training=True))
        > 0
    )


def test_noise_shape_broadcasts_the_mask():
    layer = AlbertDropout(0.5, noise_shape=(None, 1, 64), seed=3)
    y = np.asarray(_compiled(layer, True)(np.ones((4, 6, 64), "float32")))
    # One mask per (batch, feature), shared along the middle axis.
    assert np.all(y == y[:, :1, :])
    assert 0.3 < (y[:, 0, :] == 0).mean() < 0.7


def test_mixed_precision_keeps_the_dtype():
    layer = AlbertDropout(0.1, dtype="mixed_bfloat16", seed=5)
    y = _compiled(layer, True)(tf.ones((16, 512), "bfloat16"))
    assert y.dtype == tf.bfloat16
    values = set(np.unique(np.asarray(tf.cast(y, "float32"))).tolist())
    assert values == {0.0, float(np.float32(tf.cast(1 / 0.9, "bfloat16")))}


def test_a_rate_that_is_no_number_is_named():
    """`AlbertClassifier(backbone, dropout="0.1")` failed inside Keras with
    "'<=' not supported between instances of 'int' and 'str'"."""
    from albert_keras import AlbertBackbone, AlbertClassifier

    for rate in ("0.1", None, True):
        with pytest.raises(TypeError, match="A dropout rate must be a number in"):
            AlbertDropout(rate)
    with pytest.raises(TypeError, match=r"Received: '0\.1' \(a str\)"):
        AlbertClassifier(AlbertBackbone("albert_tiny"), dropout="0.1")
    assert AlbertDropout(np.float32(0.25)).rate == 0.25  # NumPy numbers are


def test_config_round_trip():
    layer = AlbertDropout(0.25, noise_shape=(None, 1), seed=9, name="d")
    clone = AlbertDropout.from_config(layer.get_config())
    assert (clone.rate, clone.noise_shape, clone.seed, clone.name) == (
        0.25,
        (None, 1),
        9,
        "d",
    )
    restored = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(layer)
    )
    assert type(restored) is AlbertDropout


def test_xla_mask_is_much_faster_than_keras_dropout():
    # Why the layer exists: under `jit_compile` on CPU, Keras's dropout mask
    # (TensorFlow's "auto_select" stateless RNG) compiles, with TensorFlow
    # 2.21, to code about 25x slower than Philox. TensorFlow 2.20 compiles
    # both alike (measured with Keras 3.13 and 3.15): there the layer must
    # only not be slower. One attention-probability tensor of the small
    # config at batch 64 x 64 tokens.
    x = tf.random.normal((64, 4, 64, 64))

    def best_time(layer):
        step = _compiled(layer, True)
        step(x).numpy()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            step(x).numpy()
            times.append(time.perf_counter() - start)
        return min(times)

    ours = best_time(AlbertDropout(0.1, seed=1))
    theirs = best_time(keras.layers.Dropout(0.1, seed=1))
    figures = (
        f"AlbertDropout {ours * 1e3:.1f} ms vs keras.layers.Dropout "
        f"{theirs * 1e3:.1f} ms under XLA, TensorFlow {tf.__version__}"
    )
    if tuple(int(v) for v in tf.__version__.split(".")[:2]) < (2, 21):
        assert ours < 1.5 * theirs, figures
        return
    assert ours * 4 < theirs, (
        f"{figures}: if TensorFlow has fixed its auto_select RNG on CPU, "
        "AlbertDropout is no longer needed"
    )
