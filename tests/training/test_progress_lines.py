"""`ProgressLines` and `progress_output`: plain progress where output is a log."""

import io
import sys

import keras
import numpy as np

from albert_keras.training.progress_lines import ProgressLines, progress_output


def _fit(callback, epochs=2):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x = np.arange(24, dtype="float32").reshape(8, 3) / 24
    y = x.sum(axis=1, keepdims=True)
    return model.fit(
        x, y, batch_size=2, epochs=epochs, callbacks=[callback], verbose=0
    ).history


def test_a_line_per_interval_and_per_epoch_with_the_epoch_logs():
    out = io.StringIO()
    history = _fit(ProgressLines(interval=0.0, stream=out))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 * 4 + 2  # 4 steps per epoch, then the epoch's line
    assert lines[0].startswith("epoch 1/2 step 1/4: loss ")
    assert lines[3].endswith("0 s left") and "s/step" in lines[3]
    assert lines[4].startswith("epoch 1/2 done in ")
    assert lines[9].startswith("epoch 2/2 done in ")
    # The epoch line holds the epoch's numbers, as `fit` returns them.
    assert f"loss {history['loss'][1]:.4f}" in lines[9]
    assert f"mae {history['mae'][1]:.4f}" in lines[9]
    assert "\b" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_the_interval_bounds_the_lines():
    out = io.StringIO()
    _fit(ProgressLines(interval=3600.0, stream=out))
    assert [line.split(" done")[0] for line in out.getvalue().splitlines()] == [
        "epoch 1/2",
        "epoch 2/2",
    ]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_auto_is_the_keras_bar_on_a_terminal_and_lines_elsewhere(monkeypatch):
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    verbose, callbacks = progress_output("auto")
    assert verbose == 0 and [type(c) for c in callbacks] == [ProgressLines]
    monkeypatch.setattr(sys, "stdout", _Terminal())
    assert progress_output("auto") == (1, [])
    for verbose in (0, 1, 2):  # what the caller asked for, as it is
        assert progress_output(verbose) == (verbose, [])


def test_figures_are_written_one_way_everywhere():
    """Progress lines, dev lines, finetune and predict share `score_text`:
    SQuAD's answer-nothing threshold (the lowest float32) is short, not a
    39-digit number, and what is not a number is left out."""
    from albert_keras.training.score_text import score_text

    logs = {"val_f1": 0.5, "val_best_f1_thresh": -3.4028234663852886e38, "x": "a"}
    assert score_text(logs) == "val_f1 0.5000, val_best_f1_thresh -3.403e+38"
    out = io.StringIO()
    lines = ProgressLines(stream=out)
    lines.set_params({"epochs": 1})
    lines.on_epoch_begin(0)
    lines.on_epoch_end(0, logs)
    assert out.getvalue().split(": ", 1)[1] == score_text(logs) + "\n"
