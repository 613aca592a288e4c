"""`ProgressLines`: plain progress lines for logs that are not a terminal."""

from __future__ import annotations

import sys
import time

import keras

from albert_keras.training.score_text import score_text


class ProgressLines(keras.callbacks.Callback):
    """One plain line every `interval` seconds, and one per epoch.

    Keras' progress bar redraws itself with backspaces up to 20 times a
    second, even where the output is a file (a batch job's log, `nohup`, a
    pipe): long runs leave megabytes of control characters there. This prints
    a line such as `epoch 2/3 step 410/1000: loss 0.6012, 0.21 s/step, 2 min
    left` at most every `interval` seconds, and the epoch's logs when it
    ends. Use `progress_output` to choose between the two.

    Args:
        interval: seconds between two lines within an epoch.
        stream: where to write (default `sys.stdout`).
        unit: what a Keras epoch is called in the lines ("evaluation" for
            fine-tuning's `--eval-every` stretches).

    Example:
    >>> import io
    >>> out = io.StringIO()
    >>> lines = ProgressLines(interval=0.0, stream=out)
    >>> lines.set_params({"epochs": 1, "steps": 2})
    >>> lines.on_epoch_begin(0)
    >>> lines.on_train_batch_end(0, {"loss": 0.5})
    >>> out.getvalue().split(",")[0]
    'epoch 1/1 step 1/2: loss 0.5000'
    """

    def __init__(self, interval: float = 30.0, stream=None, unit: str = "epoch"):
        super().__init__()
        self.interval = interval
        self.stream = stream
        self.unit = unit
        self._epoch = 0
        self._start = self._last = 0.0

    def _write(self, text):
        print(text, file=self.stream or sys.stdout, flush=True)

    def _epoch_name(self):
        return f"{self.unit} {self._epoch + 1}/{self.params.get('epochs') or '?'}"

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._start = self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if now - self._last < self.interval:
            return
        self._last = now
        steps = self.params.get("steps")
        per_step = (now - self._start) / (batch + 1)
        loss = score_text(logs, ("loss",))
        parts = ([loss] if loss else []) + [f"{per_step:.3g} s/step"]
        if steps:
            parts.append(f"{_duration(per_step * (steps - batch - 1))} left")
        head = f"{self._epoch_name()} step {batch + 1}/{steps or '?'}"
        self._write(f"{head}: {', '.join(parts)}")

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.perf_counter() - self._start
        head = f"{self._epoch_name()} done in {_duration(seconds)}"
        numbers = score_text(logs)
        self._write(f"{head}: {numbers}" if numbers else head)


def progress_output(verbose="auto", interval: float = 30.0, unit: str = "epoch"):
    """(`verbose` for `fit`, callbacks to add) for a run's progress display.

    "auto": Keras' progress bar on a terminal or in a notebook, `ProgressLines`
    anywhere else; 0, 1 and 2 are passed to Keras as they are.

    Args:
        verbose: "auto", 0, 1 or 2.
        interval: seconds between `ProgressLines` lines.
        unit: what `ProgressLines` calls a Keras epoch.

    Example:
    >>> progress_output(0)
    (0, [])
    """
    if verbose != "auto":
        return verbose, []
    interactive = "ipykernel" in sys.modules or sys.stdout.isatty()
    return (1, []) if interactive else (0, [ProgressLines(interval, unit=unit)])


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
