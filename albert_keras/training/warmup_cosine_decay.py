"""`WarmupCosineDecay`: linear warmup, then a half cosine down to the end rate."""

import math

import keras
from keras import ops

from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay


@keras.saving.register_keras_serializable(package="albert_keras")
class WarmupCosineDecay(WarmupPolynomialDecay):
    """Linear warmup to `learning_rate`, then cosine decay to `end_learning_rate`.

    As transformers' `get_cosine_schedule_with_warmup`: after the warmup,
    with `p = (step - warmup_steps) / (decay_steps - warmup_steps)`, the rate
    is `end + (learning_rate - end) * (1 + cos(pi * p)) / 2`, reaching the
    end rate at `decay_steps` and staying there. Steps count updates, also
    under gradient accumulation (`WarmupPolynomialDecay`).

    Args: those of `WarmupPolynomialDecay` (`learning_rate` the peak,
        `decay_steps` the total steps, `warmup_steps`, `end_learning_rate`,
        `accumulation_steps`), but `power`, which a cosine has not.

    Example:
    >>> schedule = WarmupCosineDecay(1e-3, decay_steps=110, warmup_steps=10)
    >>> round(float(schedule(5)), 6), round(float(schedule(60)), 6)
    (0.0005, 0.0005)
    """

    def _decayed(self, step):
        span = float(max(self.decay_steps - self.warmup_steps, 1))
        done = ops.clip((step - float(self.warmup_steps)) / span, 0.0, 1.0)
        cosine = 0.5 * (1.0 + ops.cos(math.pi * done))
        end = self.end_learning_rate
        return end + (self.learning_rate - end) * cosine

    def get_config(self):
        config = super().get_config()
        config.pop("power")
        return config
