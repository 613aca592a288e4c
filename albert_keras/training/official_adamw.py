"""The official ALBERT (and BERT) fine-tuning optimizer as a Keras optimizer."""

from __future__ import annotations

import keras
from keras import ops

from albert_keras.training.dense_gradients import DenseGradients


def official_adam_direction(optimizer, gradient, variable):
    """Steps the Adam moments the official way; returns m / (sqrt(v) + eps).

    The official `AdamWeightDecayOptimizer` and `LAMBOptimizer` both keep the
    plain moving averages, without bias correction. `optimizer` is a Keras
    Adam-family optimizer (its `_momentums` and `_velocities`).
    """
    gradient = ops.cast(gradient, variable.dtype)
    index = optimizer._get_variable_index(variable)
    m, v = optimizer._momentums[index], optimizer._velocities[index]
    beta_1, beta_2 = optimizer.beta_1, optimizer.beta_2
    optimizer.assign(m, beta_1 * m + (1.0 - beta_1) * gradient)
    optimizer.assign(v, beta_2 * v + (1.0 - beta_2) * ops.square(gradient))
    return m / (ops.sqrt(v) + optimizer.epsilon)


@keras.saving.register_keras_serializable(package="albert_keras")
class OfficialAdamW(DenseGradients, keras.optimizers.AdamW):
    """`AdamWeightDecayOptimizer` of the official `optimization.py`.

    `keras.optimizers.AdamW` without bias correction of the Adam moments: the
    official optimizer updates `w -= lr * (m / (sqrt(v) + epsilon) +
    weight_decay * w)` with `m` and `v` the plain moving averages. Keras's
    decoupled decay, subtracted before the step from the same `w`, is that
    term exactly; only the bias correction differs: with the default betas
    the official first step is `(1 - beta_1) / sqrt(1 - beta_2)` = 3.2 times
    Keras's, and the two converge as training goes on. Arguments are those of
    `keras.optimizers.AdamW` (`amsgrad` is not supported).

    Example:
    >>> optimizer = OfficialAdamW(learning_rate=0.1, weight_decay=0.0)
    >>> variable = keras.Variable([1.0])
    >>> optimizer.apply([keras.ops.ones((1,))], [variable])
    >>> round(float(variable[0]), 4)  # 1 - 0.1 * 0.1 / (sqrt(0.001) + 1e-7)
    0.6838
    """

    def __init__(self, **kwargs):
        if kwargs.get("amsgrad"):
            raise ValueError(
                "OfficialAdamW has no amsgrad (the official optimizer has none). "
                "Use keras.optimizers.AdamW(amsgrad=True) for it."
            )
        super().__init__(**kwargs)

    def update_step(self, gradient, variable, learning_rate):
        """One official Adam step (the decay is applied before, by Keras)."""
        lr = ops.cast(learning_rate, variable.dtype)
        self.assign_sub(
            variable, lr * official_adam_direction(self, gradient, variable)
        )
