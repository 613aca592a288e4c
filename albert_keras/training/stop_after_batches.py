"""`StopAfterBatches`: ends `fit` after a number of batches, mid-epoch if need be."""

from __future__ import annotations

import keras


class StopAfterBatches(keras.callbacks.Callback):
    """Stops training once `total` batches have run, counted over all epochs.

    Keras' `fit` trains `steps_per_epoch` batches per epoch; a run whose
    length is not a multiple of it (`--max-steps` with `--eval-every`) ends
    inside its last epoch. Setting `stop_training` after the batch ends that
    epoch there: its evaluation and `on_epoch_end` callbacks (best model,
    backups) still run, and the data is never read past the run's end (a
    dataset that runs out mid-epoch makes Keras warn and stop instead).

    Args:
        total: batches of the whole run (a resumed run's included).
        steps_per_epoch: the `steps_per_epoch` given to `fit`.

    Example:
    >>> import numpy as np, keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> x, y = np.zeros((40, 2)), np.zeros((40, 1))
    >>> history = model.fit(x, y, batch_size=4, epochs=3, steps_per_epoch=4,
    ...     callbacks=[StopAfterBatches(10, 4)], verbose=0)
    >>> int(model.optimizer.iterations), len(history.epoch)
    (10, 3)
    """

    def __init__(self, total: int, steps_per_epoch: int):
        super().__init__()
        self.total = total
        self.steps_per_epoch = steps_per_epoch
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._epoch * self.steps_per_epoch + batch + 1 >= self.total:
            self.model.stop_training = True
