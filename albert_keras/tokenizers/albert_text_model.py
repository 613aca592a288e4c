"""`AlbertTextModel`: a task model that takes raw text (tokenizer + packer inside)."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.tokenizers.albert_packer import AlbertPacker
from albert_keras.tokenizers.albert_tokenizer import AlbertTokenizer


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTextModel(keras.Model):
    """Raw strings in, the task model's outputs out.

    `model.predict(["a sentence", ...])` for single texts, or a tuple/dict of
    two string tensors (`text_a`, `text_b`) for pairs. `export_serving(path)`
    writes a SavedModel whose `serve` (and `serve_pairs`) signatures take
    `tf.string` tensors; it needs neither albert_keras nor Python
    tokenization to run. Texts longer than `sequence_length` are truncated,
    never an error.

    Args:
        task_model: e.g. `AlbertClassifier`.
        tokenizer: `AlbertTokenizer` (its vocabulary travels with the model).
        sequence_length: packed length.

    Example:
    >>> text_model = AlbertTextModel(classifier, tokenizer, 128)  # doctest: +SKIP
    >>> text_model.predict(["a fine film"])  # doctest: +SKIP
    """

    def __init__(self, task_model, tokenizer, sequence_length=128, **kwargs):
        super().__init__(**kwargs)
        self.task_model = task_model
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.packer = AlbertPacker(sequence_length, name="packer")

    def call(self, inputs, training=False):
        if isinstance(inputs, dict):
            inputs = (inputs["text_a"], inputs["text_b"])
        if (
            isinstance(inputs, (tuple, list))
            and len(inputs) == 2
            and not isinstance(inputs[0], str)
        ):
            x = self.packer(self.tokenizer(inputs[0]), self.tokenizer(inputs[1]))
        else:
            x = self.packer(self.tokenizer(inputs))
        return self.task_model(x, training=training)

    def export_serving(self, path):
        """A SavedModel with `serve(texts)` and `serve_pairs(text_a, text_b)`."""
        if not self.built:
            self(tf.constant([""]))  # builds the layers from a string batch
        archive = keras.export.ExportArchive()
        archive.track(self)
        # The SentencePiece model is a TF resource the signatures capture.
        for resource in self.tokenizer.resources:
            archive.track(resource)
        spec = tf.TensorSpec([None], tf.string)
        archive.add_endpoint("serve", lambda texts: self(texts), input_signature=[spec])
        archive.add_endpoint(
            "serve_pairs", lambda a, b: self((a, b)), input_signature=[spec, spec]
        )
        archive.write_out(path, verbose=False)

    def get_config(self):
        return {
            **super().get_config(),
            "task_model": keras.saving.serialize_keras_object(self.task_model),
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "sequence_length": self.sequence_length,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["task_model"] = keras.saving.deserialize_keras_object(
            config["task_model"]
        )
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)


__all__ = ["AlbertTextModel", "AlbertTokenizer"]
