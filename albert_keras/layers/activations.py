"""Activations by their `albert_config.json` names, with the official meanings."""

import math

import keras
from keras import ops

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)


def gelu_tanh(x):
    """GELU, tanh approximation: the official ALBERT "gelu" (HF's `gelu_new`).

    Written out rather than `keras.activations.gelu(approximate=True)` so the
    operation order matches the official graph to the last bit we can.
    """
    cdf = 0.5 * (1.0 + ops.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))
    return x * cdf


def gelu_exact(x):
    """GELU with the error function: what transformers calls "gelu"."""
    return 0.5 * x * (1.0 + ops.erf(x * _SQRT_HALF))


def linear(x):
    return x


_ACTIVATIONS = {
    "gelu": gelu_tanh,
    "gelu_new": gelu_tanh,
    "gelu_exact": gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": linear,
}


def get_activation(name: str):
    """Maps an official activation name to a function of `keras.ops`."""
    try:
        return _ACTIVATIONS[str(name).lower()]
    except KeyError:
        raise ValueError(
            f"Unknown activation. Received: {name!r}. "
            f"Allowed: {', '.join(_ACTIVATIONS)}"
        ) from None
