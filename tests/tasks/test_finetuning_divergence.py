"""A fine-tuning run whose loss becomes NaN or infinite stops and says so.

Before, it trained on: the dev scores of NaN logits (argmax 0, the
majority class's accuracy) could make the diverged model `best.keras`, its
backup the resume point, and the run "finished" with a model that outputs
NaN. Now `NanGuard` stops it at the step, nothing of that stretch is kept,
and the run ends with a message naming the fix, unfinished.
"""

import json
import os

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff

from albert_keras.cli import main
from albert_keras.tasks.finetuning_state import FinetuningState


def _model():
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    m.compile(optimizer="adam", loss="mse")
    return m


def test_the_stretch_after_a_nan_keeps_nothing(tmp_path):
    model = _model()
    state = FinetuningState(str(tmp_path), "val_accuracy")
    state.set_model(model)
    state.on_epoch_end(0, {"loss": 1.0, "val_accuracy": 0.5})
    good = [w.copy() for w in model.get_weights()]
    model.set_weights([np.full_like(w, np.nan) for w in good])
    model.nan_detected = True  # as NanGuard sets it
    state.on_epoch_end(1, {"loss": float("nan"), "val_accuracy": 0.9})
    assert len(state.rows) == 1 and state.best == 0.5
    assert sorted(os.listdir(tmp_path / "backup")) == ["epoch-0001"]
    saved = keras.saving.load_model(tmp_path / "best.keras")
    assert max(map(max_abs_diff, saved.get_weights(), good)) == 0.0
    with pytest.raises(ValueError, match="NaN or infinite") as error:
        state.on_train_end()
    assert "best: epoch 1, val_accuracy = 0.5000" in str(error.value)
    assert "--learning-rate" in str(error.value)


def test_a_diverging_run_stops_unfinished_with_the_fix(tmp_path, capsys):
    # A target of 1e30 squares to infinity in float32: the first batch
    # holding it has an infinite loss (mean squared error), on every order.
    rows = [{"text": f"word {i} " * (1 + i % 3), "label": float(i)} for i in range(7)]
    rows.append({"text": "word", "label": 1e30})
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run = tmp_path / "run"
    args = ["finetune", "--task", "regress", "--train", str(train)]
    args += ["--dev", str(train), "--init", "albert_tiny", "--output-dir", str(run)]
    args += ["--max-seq-length", "16", "--no-export", "--no-jit", "--batch-size", "4"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "NanGuard: the loss became inf" in captured.out
    assert "Fine-tuning stopped: the loss became NaN or infinite" in captured.err
    assert "best: none yet" in captured.err and "Traceback" not in captured.err
    assert not (run / "best.keras").exists()
    assert not (run / "metrics.json").exists()  # not finished
    assert not os.listdir(run / "backup") if (run / "backup").exists() else True
