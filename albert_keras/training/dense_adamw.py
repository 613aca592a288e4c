"""`DenseAdamW`: `keras.optimizers.AdamW` with embedding gradients summed first."""

from __future__ import annotations

import keras

from albert_keras.training.dense_gradients import DenseGradients


@keras.saving.register_keras_serializable(package="albert_keras")
class DenseAdamW(DenseGradients, keras.optimizers.AdamW):
    """`keras.optimizers.AdamW`, its TensorFlow `IndexedSlices` gradients made
    dense first (see `DenseGradients`): the fine-tuning optimizer of
    `create_optimizer("adamw")`. The same arguments as `AdamW`; on JAX and
    torch the same updates.

    Example:
    >>> optimizer = DenseAdamW(learning_rate=1e-4, weight_decay=0.01)
    """
