"""`AlbertSpanQA`: start/end logits for extractive question answering."""

from __future__ import annotations

import keras
from keras import ops

from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.models.model_arguments import check_backbone
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertSpanQA(TaskModel):
    """Extractive QA (SQuAD v1 style): a dense H -> 2 on every token.

    This is the official SQuAD v1 head (`cls/squad/output_weights` [2, H] and
    `output_bias` [2]). Inputs are the packed `[CLS] question [SEP] context
    [SEP]` features.

    Args:
        backbone: `AlbertBackbone`.

    Outputs: `{"start_logits": [batch, length], "end_logits": [batch, length]}`.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertSpanQA(AlbertBackbone("albert_tiny"))
    >>> sorted(model.output)  # `output_names` holds Keras's op names
    ['end_logits', 'start_logits']
    """

    def __init__(self, backbone, **kwargs):
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.span_head = keras.layers.Dense(
            2,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype=backbone.dtype_policy,
            name="span_head",
        )
        # === Functional model ===
        inputs = self.backbone_inputs()
        sequence = backbone(inputs)["sequence_output"]
        logits = ops.cast(self.span_head(sequence), "float32")
        super().__init__(
            inputs=inputs,
            outputs={"start_logits": logits[..., 0], "end_logits": logits[..., 1]},
            **kwargs,
        )
