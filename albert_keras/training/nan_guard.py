"""`NanGuard`: stop at the first non-finite loss, keep the last good checkpoint;
`nan_detected`, whether it stopped a model's training."""

from __future__ import annotations

import math

import keras

from albert_keras.training.optimizer_steps import optimizer_updates


class NanGuard(keras.callbacks.Callback):
    """Stops training when the loss is NaN or infinite.

    Sets `model.nan_detected` (so `PretrainingCheckpoint` does not save the
    bad weights) and `model.stop_training`, and prints which step failed and
    what to try. Put it before the checkpoint callback.

    Example:
    >>> guard = NanGuard()
    """

    def __init__(self):
        super().__init__()
        self.failed_step = None

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(float(loss)):
            return
        self.failed_step = optimizer_updates(self.model.optimizer)
        self.model.nan_detected = True
        self.model.stop_training = True
        print(
            f"\nNanGuard: the loss became {loss} at step {self.failed_step}; "
            "training stopped and the last good checkpoint is kept. Lower the "
            "learning rate, raise the warmup, or check the input data; a run "
            "with such changed settings goes on from that checkpoint only when "
            "forced (--force-resume), else start in another output folder."
        )


def nan_detected(model) -> bool:
    """Whether a `NanGuard` stopped `model`'s training at a non-finite loss
    (its weights are then not worth scoring or saving).

    Example:
    >>> import keras
    >>> nan_detected(keras.Sequential())
    False
    """
    return bool(getattr(model, "nan_detected", False))
