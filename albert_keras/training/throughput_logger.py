"""`ThroughputLogger`: sequences/s and tokens/s into the training logs."""

from __future__ import annotations

import time

import keras


class ThroughputLogger(keras.callbacks.Callback):
    """Adds `seq_per_sec` and `tokens_per_sec` to the epoch logs.

    Put it before `TensorBoard` and `HistoryCsv` (or `CSVLogger`) in the
    callback list so they see the values.

    Args:
        global_batch_size: sequences per step, over all replicas.
        sequence_length: tokens per sequence.

    Example:
    >>> logger = ThroughputLogger(global_batch_size=64, sequence_length=128)
    """

    def __init__(self, global_batch_size: int, sequence_length: int):
        super().__init__()
        self.global_batch_size = global_batch_size
        self.sequence_length = sequence_length
        self._start = None
        self._steps = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        self._steps = 0

    def on_train_batch_end(self, batch, logs=None):
        self._steps = batch + 1

    def on_epoch_end(self, epoch, logs=None):
        if logs is None or not self._steps:
            return
        seconds = time.perf_counter() - self._start
        seq = self._steps * self.global_batch_size / seconds
        logs["seq_per_sec"] = seq
        logs["tokens_per_sec"] = seq * self.sequence_length
