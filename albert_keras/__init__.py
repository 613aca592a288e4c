"""albert-keras: ALBERT (A Lite BERT) for TensorFlow 2 / Keras 3."""

__version__ = "0.1.0"

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
)
from albert_keras.presets import PRESETS

__all__ = [
    "PRESETS",
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertConfig",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
]
