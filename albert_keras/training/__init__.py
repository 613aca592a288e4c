"""Training: optimizers and schedules, strategies, callbacks (see README.md here)."""

from albert_keras.training.loss_curve_plot import LossCurvePlot
from albert_keras.training.nan_guard import NanGuard
from albert_keras.training.optimizers import create_optimizer
from albert_keras.training.pretraining_checkpoint import PretrainingCheckpoint
from albert_keras.training.strategies import get_strategy
from albert_keras.training.throughput_logger import ThroughputLogger
from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay

__all__ = [
    "LossCurvePlot",
    "NanGuard",
    "PretrainingCheckpoint",
    "ThroughputLogger",
    "WarmupPolynomialDecay",
    "create_optimizer",
    "get_strategy",
]
