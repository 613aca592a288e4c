"""Run under any KERAS_BACKEND: fused vs explicit attention, as JSON on stdout
(or call `differences()` in a process on the backend wanted).

For each case (padding or none, all query rows or `query_positions`) the same
`AlbertAttention` weights run on both paths; the largest difference of the
outputs and of the input gradients is printed (the gradient on JAX only).

Run as a script (JAX or torch), TensorFlow is kept out: Keras would import it
(seconds of CPU) and nothing here needs it.
"""

import json
import sys

if __name__ == "__main__":
    sys.modules.setdefault("tensorflow", None)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from albert_keras.layers import albert_attention  # noqa: E402
from albert_keras.layers.albert_attention import AlbertAttention  # noqa: E402


def outputs(layer, x, mask, positions, path):
    albert_attention.FORCE_ATTENTION_PATH = path
    out = layer(x, padding_mask=mask, query_positions=positions)
    return keras.ops.convert_to_numpy(out).astype("float64")


def input_gradient(layer, x, mask, path):
    import jax

    albert_attention.FORCE_ATTENTION_PATH = path

    def loss(values):
        return keras.ops.sum(layer(values, padding_mask=mask) ** 2)

    # Compiled once (as in a training step), not op by op: seconds less.
    gradient = jax.jit(jax.grad(loss))(keras.ops.convert_to_tensor(x))
    return np.asarray(gradient, "float64")


def differences():
    """The largest differences of the two paths, by case, and the scales."""
    rng = np.random.default_rng(0)
    layer = AlbertAttention(64, 4)
    x = rng.normal(size=(3, 12, 64)).astype("float32")
    layer.build(x.shape)
    for weight in layer.weights:
        weight.assign(rng.normal(scale=0.3, size=weight.shape).astype("float32"))
    padded = np.ones((3, 12), "int32")
    padded[1, 6:] = 0
    padded[2, 2:] = 0  # only [CLS] and one token are real
    # Three queries: an odd count, padded to four on the fused path.
    positions = np.array([[0, 3, 10], [0, 5, 9], [1, 1, 0]], "int32")
    result = {"backend": keras.backend.backend()}
    for name, mask, picked in [
        ("no_padding", None, None),
        ("padding", padded, None),
        ("padding_query_positions", padded, positions),
    ]:
        explicit = outputs(layer, x, mask, picked, "explicit")
        fused = outputs(layer, x, mask, picked, "fused")
        result[name] = float(np.max(np.abs(explicit - fused)))
        result[name + "_scale"] = float(np.max(np.abs(explicit)))
    if keras.backend.backend() == "jax":
        grads = [input_gradient(layer, x, padded, p) for p in ("explicit", "fused")]
        result["gradient"] = float(np.max(np.abs(grads[0] - grads[1])))
    return result


if __name__ == "__main__":
    json.dump(differences(), sys.stdout)
