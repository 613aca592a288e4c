"""`AlbertMultipleChoice`: one score per option (RACE style)."""

from __future__ import annotations

import keras
from keras import ops

from albert_keras.config_checks import is_positive_int
from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.models.model_arguments import check_backbone
from albert_keras.models.task_model import TaskModel


class _MergeChoices(keras.layers.Layer):
    """[batch, choices, length] -> [batch * choices, length] (and back for scores)."""

    def __init__(self, num_choices=None, **kwargs):
        super().__init__(**kwargs)
        self.num_choices = num_choices

    def call(self, x):
        if self.num_choices is None:  # merge
            return ops.reshape(x, (-1, ops.shape(x)[-1]))
        return ops.reshape(x, (-1, self.num_choices))

    def compute_output_shape(self, shape):
        if self.num_choices is None:
            return (None, shape[-1])
        return (None, self.num_choices)

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertMultipleChoice(TaskModel):
    """Multiple choice: each option packed with the context, one logit per option.

    Inputs are the backbone inputs with an extra choice axis, [batch, choices,
    length]; every option runs through the backbone, its pooled output goes
    through dropout and a dense H -> 1, and the scores are softmax-able logits
    [batch, choices].

    Args:
        backbone: `AlbertBackbone`.
        num_choices: int. Options per example.
        dropout: float. Dropout before the dense head.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertMultipleChoice(AlbertBackbone("albert_tiny"), num_choices=3)
    >>> x = {k: keras.ops.ones((2, 3, 8), "int32") for k in model.input}
    >>> tuple(model(x)["logits"].shape)
    (2, 3)
    """

    def __init__(self, backbone, num_choices=4, dropout=0.1, **kwargs):
        if not is_positive_int(num_choices):
            raise ValueError(
                "`num_choices` must be a positive integer, the options per "
                "example (the size of the inputs' choice axis, [batch, "
                f"choices, length]). Received: num_choices={num_choices!r}"
            )
        num_choices = int(num_choices)
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.output_dropout = AlbertDropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.choice_head = keras.layers.Dense(
            1,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype=backbone.dtype_policy,
            name="choice_head",
        )
        # === Functional model ===
        inputs = {
            name: keras.Input((num_choices, None), dtype="int32", name=name)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        merge = _MergeChoices(name="merge_choices")
        flat = {name: merge(tensor) for name, tensor in inputs.items()}
        pooled = backbone(flat)["pooled_output"]
        scores = self.choice_head(self.output_dropout(pooled))
        logits = _MergeChoices(num_choices, name="split_choices")(scores)
        super().__init__(
            inputs=inputs, outputs={"logits": ops.cast(logits, "float32")}, **kwargs
        )
        # === Config ===
        self.num_choices = num_choices
        self.dropout = dropout

    def _task_config(self):
        return {"num_choices": self.num_choices, "dropout": self.dropout}
