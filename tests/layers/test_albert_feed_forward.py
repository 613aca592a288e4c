import numpy as np
import pytest
from albert_test_case import max_abs_diff, run_layer_test
from numpy_ops import f64, feed_forward, randomize

from albert_keras.layers import AlbertFeedForward


@pytest.mark.parametrize(
    "activation", ["gelu", "gelu_new", "gelu_exact", "relu", "tanh", "linear"]
)
def test_matches_numpy_reference(activation):
    layer = AlbertFeedForward(16, 40, activation=activation)
    x = np.random.default_rng(0).normal(size=(2, 5, 16)).astype("float32")
    layer(x)
    randomize(layer)
    out = run_layer_test(layer, (x,))
    assert max_abs_diff(out, feed_forward(layer, f64(x))) < 1e-5


def test_gelu_is_the_tanh_approximation_not_erf():
    # The official "gelu" is the tanh form: at x=1.5 erf-GELU differs by ~1e-4.
    from albert_keras.layers import gelu_tanh

    x = np.array([1.5], "float32")
    tanh_form = (
        0.5 * 1.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (1.5 + 0.044715 * 1.5**3)))
    )
    assert abs(float(gelu_tanh(x)[0]) - tanh_form) < 1e-6


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="Received: 'swish'"):
        AlbertFeedForward(16, 32, activation="swish")
