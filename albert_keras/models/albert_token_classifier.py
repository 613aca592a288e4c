"""`AlbertTokenClassifier`: a label for every token (tagging, NER)."""

from __future__ import annotations

import keras

from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.models.model_arguments import check_backbone, check_num_classes
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTokenClassifier(TaskModel):
    """Token classification: `num_classes` logits for every token.

    The head of transformers' `AlbertForTokenClassification` (the official
    code has none): dropout on the sequence output, then one dense layer
    applied to each position. Its weights load from and convert to a
    transformers folder of that class; in an official-layout checkpoint they
    are `token_classifier/output_weights` [num_classes, H] and
    `token_classifier/output_bias`, names of albert-keras's own.

    Train it with a per-token loss and a sample weight that is 0 where a
    position has no label (padding, `[CLS]`, `[SEP]`, a word's later pieces).

    Args:
        backbone: `AlbertBackbone`.
        num_classes: int. Number of tags.
        dropout: float. Dropout before the dense head.

    Outputs: `{"logits": [batch, sequence, num_classes]}`.

    Example:
    >>> import numpy as np
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertTokenClassifier(AlbertBackbone("albert_tiny"), num_classes=5)
    >>> x = {"token_ids": np.array([[2, 10, 11, 3]]),
    ...      "segment_ids": np.zeros((1, 4), "int32"),
    ...      "padding_mask": np.ones((1, 4), "int32")}
    >>> tuple(model(x)["logits"].shape)
    (1, 4, 5)
    """

    def __init__(self, backbone, num_classes=2, dropout=0.1, **kwargs):
        num_classes = check_num_classes(num_classes, "the number of tags")
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.output_dropout = AlbertDropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.token_classifier = keras.layers.Dense(
            num_classes,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype=backbone.dtype_policy,
            name="token_classifier",
        )
        # === Functional model ===
        inputs = self.backbone_inputs()
        sequence = backbone(inputs)["sequence_output"]
        logits = self.token_classifier(self.output_dropout(sequence))
        super().__init__(
            inputs=inputs,
            outputs={"logits": keras.ops.cast(logits, "float32")},
            **kwargs,
        )
        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout

    def _task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout}
