"""`WarmupPolynomialDecay`: linear warmup, then polynomial decay (official)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup to `learning_rate`, then polynomial decay to `end_learning_rate`.

    As the official `optimization.create_optimizer`: for `step < warmup_steps`
    the rate is `learning_rate * step / warmup_steps`; after it,
    `(learning_rate - end) * (1 - step / decay_steps) ** power + end`, with
    the decay counted from step 0 (so warmup and decay overlap, as there).

    Args:
        learning_rate: float. Peak rate (the paper: 0.00176 at batch 4096).
        decay_steps: int. Total training steps.
        warmup_steps: int. Warmup steps (the paper: 3125).
        end_learning_rate: float. Final rate.
        power: float. 1.0 is linear decay; 0.0 a constant rate after the
            warmup.
        accumulation_steps: int. The optimizer's `gradient_accumulation_steps`
            (1: none). Keras calls the schedule with the count of batches, not
            of updates; dividing by this counts updates, so that `decay_steps`
            and `warmup_steps` are updates and N accumulated batches of B
            rows step as one batch of N * B.

    Example:
    >>> schedule = WarmupPolynomialDecay(1e-3, decay_steps=100, warmup_steps=10)
    >>> round(float(schedule(5)), 6), round(float(schedule(55)), 6)
    (0.0005, 0.00045)
    """

    def __init__(
        self,
        learning_rate,
        decay_steps,
        warmup_steps=0,
        end_learning_rate=0.0,
        power=1.0,
        accumulation_steps=1,
    ):
        if decay_steps < 1:
            raise ValueError(
                f"`decay_steps` must be >= 1. Received: decay_steps={decay_steps}"
            )
        if not 0 <= warmup_steps <= decay_steps:
            raise ValueError(
                "`warmup_steps` must be between 0 and `decay_steps`. Received: "
                f"warmup_steps={warmup_steps}, decay_steps={decay_steps}"
            )
        self.learning_rate = learning_rate
        self.decay_steps = decay_steps
        self.warmup_steps = warmup_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.accumulation_steps = int(accumulation_steps)

    def __call__(self, step):
        if self.accumulation_steps > 1:
            step = ops.floor_divide(step, self.accumulation_steps)
        step = ops.cast(step, "float32")
        decayed = self._decayed(step)
        if self.warmup_steps == 0:
            return decayed
        warmup = self.learning_rate * step / float(self.warmup_steps)
        return ops.where(step < self.warmup_steps, warmup, decayed)

    def _decayed(self, step):
        """The rate after the warmup, at update `step` (float32)."""
        done = ops.minimum(step, float(self.decay_steps)) / float(self.decay_steps)
        return (self.learning_rate - self.end_learning_rate) * ops.power(
            1.0 - done, self.power
        ) + self.end_learning_rate

    def get_config(self):
        return {
            "learning_rate": self.learning_rate,
            "decay_steps": self.decay_steps,
            "warmup_steps": self.warmup_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "accumulation_steps": self.accumulation_steps,
        }
