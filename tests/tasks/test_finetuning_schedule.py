"""`--max-steps`, `--eval-every` and `--warmup-steps` (the official recipes'
`train_step`, `save_checkpoints_steps` + eval, `warmup_step`).

Before, a run trained whole epochs and scored dev once per epoch: on a long
epoch the best model could only be an epoch end, and a kill lost the epoch.
Now a run trains a number of updates, scores dev every N of them (and at the
end), keeps the best, backs up and resumes at each evaluation, mid-epoch
included. The references are runs of the old, per-epoch kind: the cadence
of evaluation must not change what trains.
"""

import errno
import os

import keras
import numpy as np
import pytest
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, atomic_files
from albert_keras.cli import main
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_options import FinetuningOptions

# 40 rows in batches of 8: 5 batches an epoch.
ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(40)]


class LateBest(ClassificationTask):
    """Dev scores rise with every update: the best model is the last one."""

    def scores(self, model, data, dataset):
        scores = super().scores(model, data, dataset)
        scores["accuracy"] = float(model.optimizer.iterations) / 1000.0
        return scores


def _fit(folder, **options):
    keras.utils.set_random_seed(0)
    backbone = AlbertBackbone(micro_config(8000, hidden_dropout_prob=0.1))
    task = LateBest(num_classes=2, sequence_length=16)
    options = dict(batch_size=8, export=False, jit_compile=False, verbose=0, **options)
    task.fit(backbone, ROWS, ROWS[:8], str(folder), vocab=SPM_MODEL_PATH, **options)
    return task


def _max_diff(a, b):
    pairs = zip(a.get_weights(), b.get_weights(), strict=True)
    return max(float(np.max(np.abs(x - y))) for x, y in pairs)


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    """7 updates scored every 3 (after updates 3, 6 and 7), over 2 epochs."""
    return _fit(tmp_path_factory.mktemp("uneven"), max_steps=7, eval_every=3)


def test_max_steps_in_whole_epochs_trains_as_epochs(tmp_path):
    by_epochs = _fit(tmp_path / "epochs", epochs=2)
    by_steps = _fit(tmp_path / "steps", max_steps=10)
    assert int(by_steps.model.optimizer.iterations) == 10
    assert _max_diff(by_epochs.model, by_steps.model) < 1e-6
    assert by_steps.result["epochs"]["loss"] == pytest.approx(
        by_epochs.result["epochs"]["loss"], abs=1e-6
    )
    assert by_epochs.result["epochs"]["step"] == [5, 10]


def test_evaluations_every_n_updates_and_at_the_end(tmp_path, uneven):
    result = uneven.result
    assert result["epochs"]["step"] == [3, 6, 7]
    assert result["evaluated"] == "evaluation"
    assert (result["best_epoch"], result["best_step"]) == (3, 7)
    assert int(uneven.model.optimizer.iterations) == 7
    with open(os.path.join(uneven.output_dir, "history.csv")) as f:
        assert len(f.read().splitlines()) == 1 + 3
    # Scoring dev more often changes nothing that trains: the same 7
    # updates, scored after epoch 1 (update 5) and at the end.
    per_epoch = _fit(tmp_path / "per-epoch", max_steps=7)
    assert per_epoch.result["epochs"]["step"] == [5, 7]
    assert _max_diff(per_epoch.model, uneven.model) < 1e-6


class DiskFull:
    """Fails the rename onto the backup `name`, as a full disk would."""

    def __init__(self, name):
        self.name = name

    def __call__(self, source, target):
        if os.path.basename(target) == self.name:
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        os.replace(source, target)


def test_a_run_killed_mid_epoch_resumes_at_its_last_evaluation(
    tmp_path, monkeypatch, capsys, uneven
):
    out = tmp_path / "run"
    # The backup of evaluation 3 fails: the run resumes after evaluation 2,
    # at update 6, which is batch 2 of epoch 2.
    monkeypatch.setattr(atomic_files, "_replace", DiskFull("epoch-0003"))
    with pytest.raises(OSError, match="No space left"):
        _fit(out, max_steps=7, eval_every=3)
    monkeypatch.undo()
    resumed = _fit(out, max_steps=7, eval_every=3)
    assert "Resuming after evaluation 2 (step 6)" in capsys.readouterr().out
    assert resumed.result["epochs"]["step"] == [3, 6, 7]
    assert _max_diff(resumed.model, uneven.model) < 1e-6


def test_warmup_steps_reach_the_schedule(tmp_path):
    task = _fit(tmp_path / "run", max_steps=4, warmup_steps=3)
    schedule = task.model.optimizer.get_config()["learning_rate"]["config"]
    assert (schedule["warmup_steps"], schedule["decay_steps"]) == (3, 4)
    # More than the run: all of it.
    assert FinetuningOptions(warmup_steps=9).warmup_updates(4) == 4


@pytest.mark.parametrize(
    "bad, flag",
    [
        ({"max_steps": 0}, "--max-steps"),
        ({"eval_every": -2}, "--eval-every"),
        ({"eval_every": 2.5}, "--eval-every"),
        ({"warmup_steps": -1}, "--warmup-steps"),
    ],
)
def test_bad_counts_are_refused_with_the_flag(bad, flag):
    with pytest.raises(ValueError, match=flag):
        FinetuningOptions(**bad)


def test_the_cli_passes_the_flags_and_refuses_bad_ones(tmp_path, capsys):
    import json

    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    args = ["finetune", "--task", "classify", "--train", str(train)]
    args += ["--dev", str(train), "--output-dir", str(tmp_path / "run")]
    assert main(args + ["--eval-every", "0"]) == 2
    err = capsys.readouterr().err
    assert "`eval_every` (--eval-every) must be at least 1" in err
    assert "Traceback" not in err


class EarlyBest(ClassificationTask):
    """Dev scores fall with every update: the best model is the first one."""

    def scores(self, model, data, dataset):
        scores = super().scores(model, data, dataset)
        scores["accuracy"] = 1.0 / (1.0 + float(model.optimizer.iterations))
        return scores


def test_progress_and_the_stop_are_told_in_evaluations(tmp_path, capsys):
    task = EarlyBest(num_classes=2, sequence_length=16)
    backbone = AlbertBackbone(micro_config(8000))
    result = task.fit(
        backbone, ROWS, ROWS[:8], str(tmp_path / "run"), vocab=SPM_MODEL_PATH,
        batch_size=8, max_steps=7, eval_every=3, patience=2, export=False,
        jit_compile=False, verbose="auto",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "evaluation 3/3 done in" in printed and "epoch 1/" not in printed
    assert (result["best_epoch"], result["best_step"]) == (1, 3)
    # Out of patience at the last evaluation: the run ended, it did not stop early.
    assert result["epochs_run"] == 3 and not result["stopped_early"]
    # Started again, the finished run is told in its unit too.
    again = EarlyBest(num_classes=2, sequence_length=16)
    again.fit(
        backbone, ROWS, ROWS[:8], str(tmp_path / "run"), vocab=SPM_MODEL_PATH,
        batch_size=8, max_steps=7, eval_every=3, patience=2, export=False,
        jit_compile=False, verbose="auto",
    )  # fmt: skip
    assert "finished (best: evaluation 1 of 3" in capsys.readouterr().out
