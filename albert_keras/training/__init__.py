"""Training: optimizers and schedules, strategies, callbacks (see README.md here).

The optimizers, schedule and callbacks need only Keras (any backend); the
strategies and the pretraining checkpoint need TensorFlow and are imported on
first use, so `albert_keras.training` also loads where TensorFlow is absent.
"""

from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes
from albert_keras.training.fast_lamb import FastLamb
from albert_keras.training.loss_curve_plot import LossCurvePlot
from albert_keras.training.nan_guard import NanGuard
from albert_keras.training.official_adamw import OfficialAdamW
from albert_keras.training.optimizers import create_optimizer
from albert_keras.training.throughput_logger import ThroughputLogger
from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay

_NEEDS_TENSORFLOW = {
    "PretrainingCheckpoint": "albert_keras.training.pretraining_checkpoint",
    "get_strategy": "albert_keras.training.strategies",
}

__getattr__, __dir__ = _lazy_attributes(__name__, _NEEDS_TENSORFLOW)


__all__ = [
    "FastLamb",
    "LossCurvePlot",
    "NanGuard",
    "OfficialAdamW",
    "PretrainingCheckpoint",
    "ThroughputLogger",
    "WarmupPolynomialDecay",
    "create_optimizer",
    "get_strategy",
]
