"""Training: optimizers and schedules, strategies, callbacks (see README.md here).

Every attribute is imported on first use: the run files (`run_lock`,
`run_settings`) load without Keras, the optimizers, schedule and callbacks
need only Keras (any backend), the strategies and the pretraining checkpoint
need TensorFlow.
"""

from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes

_ATTRIBUTES = {
    "ClassWeightedCrossentropy": "albert_keras.training.class_weighted_crossentropy",
    "DenseAdamW": "albert_keras.training.dense_adamw",
    "DenseGradients": "albert_keras.training.dense_gradients",
    "FastLamb": "albert_keras.training.fast_lamb",
    "InBatchNegativesLoss": "albert_keras.training.in_batch_negatives_loss",
    "LossCurvePlot": "albert_keras.training.loss_curve_plot",
    "NanGuard": "albert_keras.training.nan_guard",
    "OfficialAdamW": "albert_keras.training.official_adamw",
    "create_optimizer": "albert_keras.training.optimizers",
    "ThroughputLogger": "albert_keras.training.throughput_logger",
    "WarmupPolynomialDecay": "albert_keras.training.warmup_polynomial_decay",
    "WarmupCosineDecay": "albert_keras.training.warmup_cosine_decay",
    "PretrainingCheckpoint": "albert_keras.training.pretraining_checkpoint",
    "get_strategy": "albert_keras.training.strategies",
    "HistoryCsv": "albert_keras.training.history_csv",
    "RunLock": "albert_keras.training.run_lock",
}

__getattr__, __dir__ = _lazy_attributes(__name__, _ATTRIBUTES)

__all__ = sorted(_ATTRIBUTES)
