"""ALBERT models: the backbone and the task models (see README.md here)."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.albert_span_qa import AlbertSpanQA
from albert_keras.models.albert_squad_v2 import AlbertSquadV2

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
    "AlbertSquadV2",
]
