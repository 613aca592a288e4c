"""`pretrain --gradient-accumulation-steps N`: N batches per update, exactly.

Before, a pretraining batch that did not fit in memory could not be trained:
`run_pretraining` had no accumulation, and Keras' own calls the schedule with
the count of batches (warmup and decay N times too fast). Here N batches of
B train as batches of N * B: the same weights (official features weight
every prediction, so each batch's masked-word mean is the large batch's),
steps, warmup and checkpoints counted in updates, and a run stopped between
updates resumes from the update before, redoing the batches after it.
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from accumulation_runs import pretrain_settings
from albert_test_case import micro_config, official_features

from albert_keras.cli import main
from albert_keras.pretraining.pretraining_run import run_pretraining
from albert_keras.pretraining.step_accounting import check_step_accounting
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.training import LossCurvePlot
from albert_keras.training.pretraining_checkpoint import checkpoint_files

CONFIG = micro_config(50)  # dropout 0: the same computation up to rounding
LENGTH, UPDATE_BATCH = 12, 8


def _batches(size):
    def dataset(skip):
        features = official_features(32, LENGTH)
        data = tf.data.Dataset.from_tensor_slices(features).repeat()
        return data.batch(size).skip(skip)

    return dataset


def _pretrain(out, accumulation, batch=None, **changes):
    """4 updates of `UPDATE_BATCH` rows in `accumulation` batches (of `batch`)."""
    keras.utils.set_random_seed(0)
    batch = batch or UPDATE_BATCH // accumulation
    settings = pretrain_settings(batch, accumulation, **changes)
    return run_pretraining(_batches(batch), CONFIG, str(out), **settings)


def _weights(result):
    return [keras.ops.convert_to_numpy(w) for w in result["model"].weights]


def _max_diff(ours, theirs):
    pairs = zip(ours, theirs, strict=True)
    return max(float(np.max(np.abs(a - b))) for a, b in pairs)


def _steps(out):
    return [
        int(n.rsplit("-", 1)[1]) for n in checkpoint_files(str(out / "checkpoints"))
    ]


@pytest.fixture(autouse=True)
def no_curves(monkeypatch):
    monkeypatch.setattr(LossCurvePlot, "draw", lambda self: None)


@pytest.fixture(scope="module")
def large_batches(tmp_path_factory):
    """4 updates of batches of 8, no accumulation: the reference."""
    return _weights(_pretrain(tmp_path_factory.mktemp("large"), 1))


@pytest.mark.parametrize("accumulation, per_execution", [(2, 1), (4, 2), (2, 4)])
def test_accumulated_batches_train_as_the_large_batch(
    tmp_path, large_batches, accumulation, per_execution
):
    result = _pretrain(tmp_path, accumulation, steps_per_execution=per_execution)
    assert _max_diff(_weights(result), large_batches) < 1e-6
    # Steps and checkpoints count updates, not batches.
    assert result["global_step"] == 4 and _steps(tmp_path) == [2, 4]


def test_the_small_batches_alone_train_other_weights(tmp_path, large_batches):
    # The check can fail: 4 updates of batches of 4 are another run.
    small = _pretrain(tmp_path, 1, batch=4)
    assert _max_diff(_weights(small), large_batches) > 1e-3


class StopAtBatch(keras.callbacks.Callback):
    """Stops the run after its `batch`-th batch (counted over epochs)."""

    def __init__(self, batch):
        super().__init__()
        self.batch, self.seen = batch, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.batch:
            self.model.stop_training = True


def test_a_run_stopped_between_updates_resumes_from_the_update_before(
    tmp_path, large_batches
):
    # Batch 7 of 2 per update: 3 updates and half of the 4th. Saved at its
    # end (as "step 3"), the half sum would be restored, and its batch seen
    # again after the resume.
    _pretrain(tmp_path, 2, extra_callbacks=[StopAtBatch(7)])
    assert _steps(tmp_path) == [2]
    resumed = _pretrain(tmp_path, 2)
    assert _max_diff(_weights(resumed), large_batches) < 1e-6
    assert _steps(tmp_path) == [2, 4]


def test_executions_that_would_end_inside_an_update_are_refused():
    check_step_accounting(4, 2, 2, 4, accumulation=2)  # two updates a call
    check_step_accounting(3, 3, 1, 2, accumulation=4)  # half an update a call
    with pytest.raises(ValueError, match="neither divides nor is a multiple"):
        check_step_accounting(6, 6, 6, 3, accumulation=2)
    # 4 updates a call: --save-every 2 would be skipped.
    with pytest.raises(
        ValueError,
        match=r"--save-every 2 \(save_every=2, 4 batches with "
        r"--gradient-accumulation-steps 2,\) is not a multiple of "
        r"--steps-per-execution 8.*Use --save-every 4",
    ):
        check_step_accounting(8, 4, 2, 8, accumulation=2)
    for bad in (0, 1.5, "2"):
        with pytest.raises(ValueError, match="--gradient-accumulation-steps"):
            check_step_accounting(4, 2, 2, 1, accumulation=bad)


def _cli(tmp_path, *flags):
    corpus = tmp_path / "corpus.txt"
    text = "\n\n".join(
        "\n".join(f"Sentence {i} of letter {d} was written by Emma." for i in range(6))
        for d in range(6)
    )
    corpus.write_text(text + "\n", encoding="utf-8")
    args = ["pretrain", "--input", str(corpus), "--preset", "albert_tiny"]
    args += ["--output-dir", str(tmp_path / "run"), "--vocab", SPM_MODEL_PATH]
    args += ["--max-seq-length", "16", "--batch-size", "2", "--no-jit"]
    return main(args + list(flags))


def test_the_cli_trains_updates_of_accumulated_batches(tmp_path, capsys, monkeypatch):
    from albert_keras.pretraining import pretrain_outputs

    monkeypatch.setattr(pretrain_outputs, "export_text_model", lambda *a: None)
    flags = ("--steps", "2", "--warmup-steps", "1", "--save-every", "1")
    assert _cli(tmp_path, *flags, "--gradient-accumulation-steps", "3") == 0
    out = capsys.readouterr().out
    assert "batch 6 (3 accumulated batches of 2, in the memory of 2) x 16" in out
    run = tmp_path / "run"
    settings = json.loads((run / "run_settings.json").read_text())
    assert settings["gradient_accumulation_steps"] == 3
    assert json.loads((run / "metrics.json").read_text())["global_step"] == 2
    # The checkpoints count batches of 2 in threes: no other N goes on.
    code = _cli(tmp_path, "--steps", "3", "--warmup-steps", "1", "--force-resume")
    assert code == 2
    err = capsys.readouterr().err
    assert "holds a run with --gradient-accumulation-steps 3" in err
