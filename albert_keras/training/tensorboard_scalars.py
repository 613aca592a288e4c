"""`TensorBoardScalars`: epoch scalars for TensorBoard without TensorFlow."""

from __future__ import annotations

import numbers
import os

import keras


class TensorBoardScalars(keras.callbacks.Callback):
    """Writes each epoch's logs as TensorBoard scalars, through `tensorboard` alone.

    `keras.callbacks.TensorBoard` writes with `tf.summary`, so it needs
    TensorFlow; this writes the same `epoch_<name>` scalars (training logs in
    `train/`, `val_*` ones in `validation/`, the layout Keras uses) with the
    `tensorboard` package's own event writer, for runs on JAX or torch where
    TensorFlow is not installed.

    Args:
        log_dir: the folder `tensorboard --logdir` is pointed at.

    Example:
    >>> import tempfile
    >>> callback = TensorBoardScalars(tempfile.mkdtemp())
    >>> callback.on_epoch_end(0, {"loss": 2.5, "val_loss": 2.7})
    >>> callback.on_train_end()
    """

    def __init__(self, log_dir: str):
        super().__init__()
        self.log_dir = log_dir
        self._writers = {}

    def _writer(self, name):
        if name not in self._writers:
            from tensorboard.summary import Writer

            self._writers[name] = Writer(os.path.join(self.log_dir, name))
        return self._writers[name]

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            if not isinstance(value, numbers.Number):
                try:
                    value = float(value)
                except (TypeError, ValueError):
                    continue  # not a scalar
            folder, name = (
                ("validation", key[4:])
                if key.startswith("val_")
                else (
                    "train",
                    key,
                )
            )
            self._writer(folder).add_scalar(f"epoch_{name}", float(value), step=epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
