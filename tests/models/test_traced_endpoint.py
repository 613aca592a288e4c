"""An export traces the served function once, and keeps its argument names."""

import keras
import numpy as np
import tensorflow as tf

from albert_keras.models.traced_endpoint import add_traced_endpoint


def test_an_export_traces_the_function_once_and_keeps_the_input_names(tmp_path):
    """`add_endpoint(..., input_signature=...)` alone traced it twice (again
    inside `tf.saved_model.save`): a text model's tokenizer and model too."""
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
    layer.build((None, 1))
    traces = []

    def scale(values, offsets):
        traces.append(values.shape)
        return {"y": layer(values[:, None])[:, 0] * 3.0 + offsets}

    spec = tf.TensorSpec([None], tf.float32)
    archive = keras.export.ExportArchive()
    archive.track(layer)
    add_traced_endpoint(archive, "serve", scale, [spec, spec])
    archive.write_out(str(tmp_path / "saved"), verbose=False)
    assert len(traces) == 1, traces
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    signature = loaded.signatures["serve"]
    assert sorted(signature.structured_input_signature[1]) == ["offsets", "values"]
    got = signature(values=tf.constant([1.0, 2.0]), offsets=tf.constant([0.5, 0.0]))
    np.testing.assert_array_equal(got["y"].numpy(), [3.5, 6.0])
    layer.kernel.assign([[2.0]])  # the saved weight serves, not the live one
    served = loaded.serve(tf.constant([1.0]), tf.constant([0.0]))["y"]
    np.testing.assert_array_equal(served.numpy(), [3.0])
