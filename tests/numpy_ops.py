"""Tiny float64 NumPy pieces for layer tests, written from the paper and ALBERT_FACTS.

Independent of our layers: they read the weights and recompute the math.
"""

import numpy as np


def layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def gelu_erf(x):
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


ACT = {
    "gelu": gelu_tanh,
    "gelu_exact": gelu_erf,
    "gelu_new": gelu_tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "tanh": np.tanh,
    "linear": lambda x: x,
}


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def f64(x):
    return np.asarray(x, "float64")


def dense(layer, x):
    return x @ f64(layer.kernel) + f64(layer.bias)


def attention(layer, x, mask):
    """Official attention: -10000 on padded keys, post-LN residual."""
    b, t, h = x.shape
    n = layer.num_heads
    d = h // n

    def split(y):
        return y.reshape(b, t, n, d).transpose(0, 2, 1, 3)

    q, k, v = (split(dense(dl, x)) for dl in (layer.query, layer.key, layer.value))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    scores = scores + (1.0 - f64(mask)[:, None, None, :]) * -10000.0
    context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
    out = dense(layer.output_dense, context)
    ln = layer.layer_norm
    return layer_norm(out + x, f64(ln.gamma), f64(ln.beta))


def feed_forward(layer, x):
    inner = ACT[layer.activation](dense(layer.intermediate, x))
    out = dense(layer.output_dense, inner)
    ln = layer.layer_norm
    return layer_norm(out + x, f64(ln.gamma), f64(ln.beta))


def randomize(layer, seed=0, scale=0.2):
    """Non-trivial weights (LayerNorm too) so that errors cannot hide."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        shape = tuple(w.shape)
        value = rng.normal(0.0, scale, shape)
        if w.path.endswith("gamma"):
            value = 1.0 + 0.5 * value
        w.assign(value.astype(w.dtype))
