"""albert-keras: ALBERT (A Lite BERT) for TensorFlow 2 / Keras 3."""

__version__ = "0.1.0"

import os as _os

# TensorFlow's C++ INFO/WARNING start-up lines drown what users read; set
# TF_CPP_MIN_LOG_LEVEL yourself before importing to see them.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
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
    "AlbertSquadV2",
]
