"""`export_litert`: a task model as a LiteRT (`.tflite`) file, token ids in.

Token ids, not text: TF Text's SentencePiece ops are not TFLite builtins (they
would need the Flex delegate and TF Text's custom ops, which the
`ai-edge-litert` interpreter does not ship). An app tokenizes with the
SentencePiece library (or LiteRT's support library) and passes the three
int32 arrays the Keras model takes.

The shared transformer block is stored once. The model is written as a
SavedModel first (`keras.export.ExportArchive`), so each weight is one
captured variable however many layers read it; the converter freezes every
variable into one constant, folds the Q/K/V concatenation of `AlbertAttention`
into one [H, 3H] constant and merges the identical results of the L calls.
The file is therefore the parameter bytes plus the graph (about 100 kB for
one shared layer repeated), not L copies of the block.
"""

from __future__ import annotations

import os
import tempfile

import keras
import tensorflow as tf

from albert_keras.atomic_files import save_atomically
from albert_keras.models.quantized_layers import quantized_layer_modes
from albert_keras.models.traced_endpoint import add_traced_endpoint

# None: float32 weights and math. "dynamic_int8": the converter's
# dynamic-range quantization: int8 weights (per channel for matmuls), float
# activations quantized on the fly; no calibration data needed.
QUANTIZATIONS = (None, "dynamic_int8")
INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")


def export_litert(model, filepath: str, quantization: str | None = None) -> str:
    """Writes `model` as a `.tflite` whose signature takes token ids.

    The signature `serving_default` takes `token_ids`, `segment_ids`,
    `padding_mask` (int32 [batch, length], any batch and length up to
    `max_position_embeddings`) and returns the model's float outputs (e.g.
    `logits`). The file appears only when complete.

    Args:
        model: a float32 model taking those three inputs (`AlbertClassifier`,
            `AlbertSpanQA`, `AlbertBackbone`); not a text-in model (take its
            `task_model`) and not a Keras-quantized one (pass
            `quantization="dynamic_int8"` to the float model instead).
        filepath: the `.tflite` file to write.
        quantization: None (float32) or "dynamic_int8" (see `QUANTIZATIONS`).

    Returns:
        `filepath`.

    Example:
    >>> import tempfile, os
    >>> from albert_keras import AlbertBackbone, AlbertClassifier
    >>> model = AlbertClassifier(AlbertBackbone("albert_tiny"), num_classes=2)
    >>> path = os.path.join(tempfile.mkdtemp(), "classifier.tflite")
    >>> export_litert(model, path) == path
    True
    """
    _check_exportable(model, filepath, quantization)
    flatbuffer = convert_to_litert(in_float32(model), quantization)

    def write(temporary):
        with open(temporary, "wb") as f:
            f.write(flatbuffer)

    return save_atomically(filepath, write)


def convert_to_litert(model, quantization: str | None = None) -> bytes:
    """The `.tflite` flatbuffer of `model` (see `export_litert`)."""
    spec = {
        name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES
    }
    with tempfile.TemporaryDirectory() as folder:
        archive = keras.export.ExportArchive()
        archive.track(model)
        add_traced_endpoint(
            archive, "serve", lambda inputs: model(inputs, training=False), [spec]
        )
        archive.write_out(folder, verbose=False)
        converter = tf.lite.TFLiteConverter.from_saved_model(folder)
        # Builtins only: the file runs in any LiteRT interpreter, no Flex.
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantization == "dynamic_int8":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        return converter.convert()


def in_float32(model):
    """`model`, or a float32 copy of it when it computes in another dtype.

    LiteRT's builtins have no bfloat16 matmul: a `mixed_bfloat16` model
    failed in the converter ("Could not translate MLIR to FlatBuffer ...
    'tf.MatMul' op"). Its variables are float32 already; the copy is built
    from its config with every dtype policy float32 and takes its weights.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> mixed = AlbertBackbone("albert_tiny", dtype="mixed_bfloat16")
    >>> in_float32(mixed).dtype_policy.name
    'float32'
    """
    layers = model._flatten_layers(include_self=True)
    if all(layer.compute_dtype == "float32" for layer in layers):
        return model

    def float32(config):
        if isinstance(config, dict):
            if config.get("class_name") in ("DTypePolicy", "FloatDTypePolicy"):
                return "float32"
            return {key: float32(value) for key, value in config.items()}
        if isinstance(config, list):
            return [float32(value) for value in config]
        return config

    config = float32(keras.saving.serialize_keras_object(model))
    copy = keras.saving.deserialize_keras_object(config)
    copy.set_weights(model.get_weights())
    return copy


def takes_token_ids(model) -> bool:
    """Whether `model` takes exactly `INPUT_NAMES`, each [batch, length]: the
    models `export_litert` writes (classifier, span QA, backbone).

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertMultipleChoice
    >>> takes_token_ids(AlbertBackbone("albert_tiny"))
    True
    >>> takes_token_ids(AlbertMultipleChoice(AlbertBackbone("albert_tiny")))
    False
    """
    inputs = getattr(model, "input", None)
    return (
        isinstance(inputs, dict)
        and set(inputs) == set(INPUT_NAMES)
        and len(inputs["token_ids"].shape) == 2
    )


def input_shapes(model) -> str:
    """The model's inputs as a user reads them: 'token_ids [batch, 4, length], ...'.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> input_shapes(AlbertBackbone("albert_tiny"))  # doctest: +ELLIPSIS
    'token_ids [batch, length], segment_ids [batch, length], ...'
    """
    inputs = getattr(model, "input", None)
    if not isinstance(inputs, dict):
        return "not a dict of named inputs"

    def shape(tensor):
        dims = [str(d) for d in tensor.shape]
        dims[0] = "batch"
        if len(dims) > 1 and dims[-1] == "None":
            dims[-1] = "length"
        return "[" + ", ".join(dims) + "]"

    return ", ".join(f"{name} {shape(tensor)}" for name, tensor in inputs.items())


def _check_exportable(model, filepath, quantization):
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "The LiteRT converter reads a TensorFlow graph: export on the "
            "TensorFlow backend (KERAS_BACKEND=tensorflow; a .keras saved on "
            f"{keras.backend.backend()} loads there). `albert-keras export` "
            "does it in a TensorFlow process."
        )
    if quantization not in QUANTIZATIONS:
        raise ValueError(
            f"Unknown `quantization`. Received: quantization={quantization!r}. "
            f"Allowed: {', '.join(map(repr, QUANTIZATIONS))}"
        )
    if not str(filepath).endswith(".tflite"):
        raise ValueError(
            f"A LiteRT file ends with .tflite. Received: filepath={filepath!r}"
        )
    if not takes_token_ids(model):
        raise ValueError(
            f"{type(model).__name__} does not take exactly token_ids, segment_ids "
            "and padding_mask of shape [batch, length]. Export a classifier, a "
            "span QA model or a backbone (a text-in model's `task_model`: the "
            "tokenizer stays outside the .tflite file)."
        )
    quantized = list(quantized_layer_modes(model))
    if quantized:
        raise ValueError(
            f"The model is already quantized (e.g. {quantized[0]!r}): the LiteRT "
            "converter cannot take Keras's int8 layers. Export the float32 model "
            'with quantization="dynamic_int8" instead.'
        )
    folder = os.path.dirname(os.path.abspath(filepath))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"No folder {folder!r} to write {filepath!r} in.")
