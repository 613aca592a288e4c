"""`AlbertChoiceTextModel`: a multiple-choice model that takes raw text."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.models.albert_text_model import AlbertTextModel
from albert_keras.models.traced_endpoint import add_traced_endpoint


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertChoiceTextModel(AlbertTextModel):
    """A context and its options as strings in, one score per option out.

    Each option is packed with its context, `[CLS] context [SEP] option
    [SEP]` (`_truncate_seq_pair` cuts the longer side), exactly as
    `choice_dataset` packs the training data, and the `[batch, choices,
    length]` features go to an `AlbertMultipleChoice`.

    - `model.predict({"context": [...], "options": [[...], ...]})` or
      `model((contexts, options))`: contexts [batch], options [batch,
      num_choices].
    - `model.export(path)` writes a SavedModel whose signature
      `serve(context, options)` takes `tf.string` tensors [batch] and [batch,
      num_choices] and returns `logits` [batch, num_choices]. It runs with
      TensorFlow and `import tensorflow_text`, without albert_keras. Another
      number of options fails, there as in the call, naming both counts (the
      task model splits its scores `num_choices` a row).
    - `model.save("m.keras")`: the vocabulary travels as an asset.

    Args:
        task_model: `AlbertMultipleChoice`.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: int. Packed length of each (context, option) pair.
        dynamic_length: bool. Pad each batch only to its longest pair.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig, AlbertMultipleChoice
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> chooser = AlbertMultipleChoice(AlbertBackbone(config), num_choices=2)
    >>> model = AlbertChoiceTextModel(chooser, AlbertTokenizer(SPM_MODEL_PATH), 32)
    >>> model.predict(
    ...     {"context": ["It rains."], "options": [["Take an umbrella.", "Sunbathe."]]},
    ...     verbose=0,
    ... )["logits"].shape
    (1, 2)
    """

    def __init__(self, task_model, tokenizer, sequence_length=128, **kwargs):
        num_choices = getattr(task_model, "num_choices", None)
        if num_choices is None:
            raise ValueError(
                "AlbertChoiceTextModel feeds an AlbertMultipleChoice (a model with "
                "`num_choices`); for classifiers and span QA use AlbertTextModel. "
                f"Received: {type(task_model).__name__}"
            )
        super().__init__(task_model, tokenizer, sequence_length, **kwargs)

    @property
    def num_choices(self):
        return self.task_model.num_choices

    def _count_error(self, received):
        """What a request with `received` options per context is told."""
        choices = self.num_choices
        return (
            f"The model scores {choices} options per context "
            f"(num_choices={choices}). Received {received}"
        )

    def _as_tensors(self, inputs):
        """Python lists as tensors; rows of options of another length than
        `num_choices` are named (not a "non-rectangular sequence" error)."""
        options = None
        if isinstance(inputs, dict):
            options = inputs.get("options")
        elif isinstance(inputs, (tuple, list)) and len(inputs) == 2:
            options = inputs[1]
        rows = options if isinstance(options, list) else []
        lengths = [len(row) if isinstance(row, (list, tuple)) else -1 for row in rows]
        if len(set(lengths)) > 1:  # all the same: `pack` names the shape
            for i, row in enumerate(rows):
                if lengths[i] not in (-1, self.num_choices):
                    raise ValueError(
                        self._count_error(f"{len(row)} options for context {i}.")
                    )
        return super()._as_tensors(inputs)

    def pack(self, inputs):
        """The task model's inputs (int32 [batch, choices, length]) for texts."""
        contexts, options = self._two_inputs(
            inputs, "context", "options", "A multiple-choice text model"
        )
        contexts = tf.reshape(tf.convert_to_tensor(contexts, tf.string), [-1])
        options = tf.convert_to_tensor(options, tf.string)
        choices = self.num_choices
        if options.shape.rank is not None and options.shape.rank != 2:
            raise ValueError(
                f"`options` must be [batch, {choices}] strings. Received rank "
                f"{options.shape.rank}"
            )
        if options.shape[-1] is not None and options.shape[-1] != choices:
            raise ValueError(
                self._count_error(
                    f"{options.shape[-1]} options per context (options of shape "
                    f"{options.shape.as_list()})."
                )
            )
        batch = tf.shape(contexts)[0]
        received = tf.shape(options)[1]  # a served signature takes any count
        tf.debugging.Assert(
            tf.equal(received, choices),
            [tf.strings.format(self._count_error("{} options per context."), received)],
        )
        tf.debugging.assert_equal(
            tf.shape(options),
            tf.stack([batch, choices]),
            message=f"options must be [batch of contexts, {choices}] strings",
        )
        repeated = tf.repeat(contexts, choices)
        packed = self.packer(
            self.tokenizer(repeated), self.tokenizer(tf.reshape(options, [-1]))
        )
        return {
            key: tf.reshape(value, [batch, choices, tf.shape(value)[-1]])
            for key, value in packed.items()
        }

    def _add_endpoints(self, archive):
        """`serve(context [batch], options [batch, num_choices])` -> logits."""
        add_traced_endpoint(
            archive,
            "serve",
            lambda context, options: self._in_rows(
                lambda x, y: self((x, y), training=False), context, options
            ),
            [
                tf.TensorSpec([None], tf.string),
                # Any count binds, then fails with both counts named (`pack`).
                tf.TensorSpec([None, None], tf.string),
            ],
        )
