"""`AlbertClassifier`: the official `run_classifier` head on the pooled output."""

from __future__ import annotations

import keras

from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.models.model_arguments import check_backbone, check_num_classes
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertClassifier(TaskModel):
    """Sequence classification (or regression) of single texts or text pairs.

    The official head: dropout (0.1 by default) on the pooled output, then a
    dense layer to `num_classes` logits. `num_classes=1` is regression
    (STS-B): the output is the raw score. `multi_label=True` makes each
    logit a label of its own (a sigmoid each, any number of them true, as
    transformers' `problem_type="multi_label_classification"`): the graph
    is the same, the flag tells the losses, the predictions and the
    converters how to read the logits. Pairs are packed by the tokenizer
    (`[CLS] a [SEP] b [SEP]` with segment ids), so the model is the same.

    Args:
        backbone: `AlbertBackbone`.
        num_classes: int. Number of labels, or 1 for regression.
        dropout: float. Dropout before the dense head.
        multi_label: bool. The logits are independent labels (sigmoid),
            not one class of `num_classes` (softmax).

    Outputs: `{"logits": [batch, num_classes]}`.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertClassifier(AlbertBackbone("albert_tiny"), num_classes=3)
    >>> model.compile(
    ...     optimizer="adam",
    ...     loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    ... )
    """

    def __init__(
        self, backbone, num_classes=2, dropout=0.1, multi_label=False, **kwargs
    ):
        num_classes = check_num_classes(num_classes, "1 for regression")
        if not isinstance(multi_label, bool):
            raise TypeError(
                f"`multi_label` must be True or False. Received: {multi_label!r}"
            )
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.output_dropout = AlbertDropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.classifier = keras.layers.Dense(
            num_classes,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype=backbone.dtype_policy,
            name="classifier",
        )
        # === Functional model ===
        inputs = self.backbone_inputs()
        pooled = backbone(inputs)["pooled_output"]
        logits = self.classifier(self.output_dropout(pooled))
        super().__init__(
            inputs=inputs,
            outputs={"logits": keras.ops.cast(logits, "float32")},
            **kwargs,
        )
        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.multi_label = multi_label

    def _task_config(self):
        return {
            "num_classes": self.num_classes,
            "dropout": self.dropout,
            "multi_label": self.multi_label,
        }
