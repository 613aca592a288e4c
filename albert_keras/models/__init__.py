"""ALBERT models: the backbone and the task models (see README.md here)."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.albert_span_qa import AlbertSpanQA
from albert_keras.models.albert_squad_v2 import AlbertSquadV2

# The optimizer and schedule that `albert-keras pretrain` and `finetune` compile
# with: registered here too, so that their `.keras` files load compiled after
# `import albert_keras.models` (both modules need only Keras).
from albert_keras.training import fast_lamb as _fast_lamb  # noqa: F401
from albert_keras.training import warmup_polynomial_decay as _schedule  # noqa: F401

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
    "AlbertSquadV2",
]
