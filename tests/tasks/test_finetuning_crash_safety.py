"""Fine-tuning loses nothing: faults injected at each write, then a restart.

Every file a run writes goes through `atomic_files` (a temporary, fsync, a
rename). Here the rename of one file fails after its temporary was cut in
half (a full disk, or a kill between the two), the run stops with the error,
and a restart must end where a run that never failed ends: the same epochs,
the same best epoch, the same best weights.
"""

import contextlib
import errno
import json
import os

import keras
import numpy as np
import pytest
from albert_test_case import TINY_FINETUNING, task_file

from albert_keras import atomic_files
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.training.run_lock import RunFolderBusy, RunLock
from albert_keras.training.run_settings import SettingsChanged

OPTIONS = dict(TINY_FINETUNING)
TRAIN = task_file("rt_sentiment", "train.jsonl")
DEV = task_file("rt_sentiment", "dev.jsonl")


class LateBest(ClassificationTask):
    """A task whose dev score rises every step: every epoch writes best.keras."""

    def scores(self, model, data, dataset):
        scores = super().scores(model, data, dataset)
        scores["accuracy"] = float(model.optimizer.iterations) / 1000.0
        return scores


def _task():
    return LateBest(sequence_length=32)


def _weights(path):
    return keras.saving.load_model(path).get_weights()


def _max_diff(a, b):
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A run that never failed: its result, its best weights and its folder."""
    out = str(tmp_path_factory.mktemp("reference"))
    result = run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
    return result, _weights(os.path.join(out, "best.keras")), out


class DiskFull:
    """Fails the `count`-th rename onto `name`, its temporary cut in half."""

    def __init__(self, name, count=1):
        self.name, self.count, self.seen = name, count, 0

    def __call__(self, source, target):
        if os.path.basename(target) == self.name:
            self.seen += 1
            if self.seen == self.count:
                if os.path.isfile(source):
                    size = os.path.getsize(source)
                    with open(source, "r+b") as f:
                        f.truncate(size // 2)
                raise OSError(errno.ENOSPC, "No space left on device (injected)")
        os.replace(source, target)


# One fault after another, each followed by a restart that meets the next:
# a better epoch's best.keras, the backup after epoch 3 (weights, optimizer,
# run state), a history.csv rewrite, then the report after training.
FAULTS = [("best.keras", 2), ("epoch-0003", 1), ("history.csv", 1), ("metrics.json", 1)]


def test_failed_writes_then_restarts_end_as_an_unbroken_run(
    tmp_path, monkeypatch, reference, capsys
):
    expected, best_weights, _ = reference
    out = str(tmp_path / "run")
    for name, count in FAULTS:
        monkeypatch.setattr(atomic_files, "_replace", DiskFull(name, count))
        with pytest.raises(OSError, match="No space left"):
            run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
        monkeypatch.undo()
        # Nothing half-written is left where a reader looks.
        assert not [n for n in os.listdir(out) if ".tmp-" in n]
        if os.path.exists(os.path.join(out, "best.keras")):
            _weights(os.path.join(out, "best.keras"))
        if name == "epoch-0003":
            # The newest backup left unreadable (0 bytes, as an in-place
            # write killed): the next run falls back to the one before.
            newest = os.path.join(out, "backup", "epoch-0002", "state.weights.h5")
            open(newest, "wb").close()
    printed = capsys.readouterr().out
    assert "epoch-0002 cannot be read" in printed
    assert "Resuming after epoch 1 (best so far: epoch 1" in printed
    result = run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
    assert result["best_epoch"] == expected["best_epoch"]
    assert result["epochs"]["loss"] == pytest.approx(expected["epochs"]["loss"])
    assert result["best"] == pytest.approx(expected["best"])
    # The data reports too: texts cut to 32 tokens counted once, not once per
    # time the resumed run built its training data.
    assert result["data"]["train"]["noted"]["cut to sequence_length=32"] > 0
    assert result["data"] == expected["data"]
    assert _max_diff(_weights(os.path.join(out, "best.keras")), best_weights) < 1e-5
    with open(os.path.join(out, "history.csv")) as f:
        assert len(f.read().splitlines()) == 1 + OPTIONS["epochs"]
    # Run again, it is finished: it says so and changes nothing.
    stamp = os.stat(os.path.join(out, "best.keras")).st_mtime_ns
    again = run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
    assert "holds this run, finished" in capsys.readouterr().out
    assert again["best"] == pytest.approx(result["best"])
    assert os.stat(os.path.join(out, "best.keras")).st_mtime_ns == stamp


class EarlyBest(ClassificationTask):
    """A task whose dev score falls every step: the best epoch is the first."""

    def scores(self, model, data, dataset):
        scores = super().scores(model, data, dataset)
        scores["accuracy"] = 1.0 / (1.0 + float(model.optimizer.iterations))
        return scores


def test_the_export_after_a_resume_is_the_best_epoch(tmp_path, monkeypatch, capsys):
    import tensorflow as tf

    out = str(tmp_path / "run")
    options = dict(OPTIONS, export=True)
    # Killed after the best epoch (1), in epoch 3; then in the export.
    for name in ("epoch-0003", "savedmodel"):
        monkeypatch.setattr(atomic_files, "_replace", DiskFull(name))
        with pytest.raises(OSError):
            run_finetuning(
                EarlyBest(sequence_length=32), TRAIN, DEV, output_dir=out, **options
            )
        monkeypatch.undo()
    result = run_finetuning(
        EarlyBest(sequence_length=32), TRAIN, DEV, output_dir=out, **options
    )
    assert result["best_epoch"] == 1 and result["epochs_run"] == 3
    assert "best so far: epoch 1" in capsys.readouterr().out
    texts = ["A fine, moving film.", "Dull and far too long."]
    best = keras.saving.load_model(os.path.join(out, "best.keras"))
    task = EarlyBest(sequence_length=32)
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer

    tokenizer = load_tokenizer(result["vocab"])
    expected = task.text_model(best, tokenizer)(tf.constant(texts))["logits"]
    served = tf.saved_model.load(os.path.join(out, "savedmodel"))
    logits = served.serve(tf.constant(texts))["logits"]
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    # ... and not the last epoch's weights, which the backup holds.
    last = best.get_weights()
    backup = os.path.join(out, "backup", "epoch-0003", "state.weights.h5")
    best.load_weights(backup)
    assert _max_diff(best.get_weights(), last) > 1e-4


def test_changed_flags_are_refused_and_overwrite_starts_over(tmp_path, reference):
    import shutil

    out = str(tmp_path / "run")
    options = OPTIONS
    shutil.copytree(reference[2], out)  # a copy of a finished run
    stamp = os.stat(os.path.join(out, "best.keras")).st_mtime_ns
    with open(os.path.join(out, "run_state.json")) as f:
        assert json.load(f)["finished"]
    os.remove(os.path.join(out, "run_state.json"))  # as if killed at the end
    # Other flags are refused by name, before anything is touched ...
    with pytest.raises(SettingsChanged, match="learning_rate: 0.002 then, 0.001 now"):
        run_finetuning(
            _task(), TRAIN, DEV, output_dir=out, **dict(options, learning_rate=1e-3)
        )
    assert os.stat(os.path.join(out, "best.keras")).st_mtime_ns == stamp
    # ... and overwrite starts over.
    run_finetuning(_task(), TRAIN, DEV, output_dir=out, overwrite=True, **options)
    assert os.stat(os.path.join(out, "best.keras")).st_mtime_ns != stamp


@pytest.fixture
def held_elsewhere():
    """Holds a folder's lock as another process would (not this one's nesting)."""
    import albert_keras.training.run_lock as run_lock

    @contextlib.contextmanager
    def hold(folder):
        with RunLock(folder, "a test"):
            held = dict(run_lock._HELD)
            run_lock._HELD.clear()
            try:
                yield
            finally:
                run_lock._HELD.update(held)

    return hold


def test_one_run_per_folder(tmp_path, capsys, held_elsewhere):
    from albert_keras.cli import main

    out = str(tmp_path / "run")
    with held_elsewhere(out):
        with pytest.raises(RunFolderBusy, match=f"PID {os.getpid()} on .*a test"):
            run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
        command = ["finetune", "--task", "classify", "--train", TRAIN, "--dev", DEV]
        assert main([*command, "--output-dir", out]) == 2
    err = capsys.readouterr().err
    assert "is in use by another run" in err and "a test" in err
    assert not os.path.exists(os.path.join(out, "best.keras"))
    # A record left by a killed holder: the folder is taken over, and said so.
    # (The other holder made the folder and wrote nothing: it went with it.)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, ".lock.json"), "w") as f:
        json.dump({"pid": 999999, "host": "elsewhere", "what": "killed"}, f)
    with RunLock(out) as lock:
        assert lock.taken_over["pid"] == 999999
    assert "Took over" in capsys.readouterr().out


def test_leftover_temporaries_are_removed(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".best.keras.tmp-123-best.keras").write_bytes(b"half")
    assert atomic_files.remove_temporaries(str(out)) == [
        ".best.keras.tmp-123-best.keras"
    ]
    assert not os.listdir(out)


def test_a_backup_swap_cut_by_a_kill_is_put_back(tmp_path):
    from albert_keras.tasks.finetuning_state import FinetuningState

    def model():
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        m.compile(optimizer="adam", loss="mse")
        return m

    first = model()
    state = FinetuningState(str(tmp_path), "val_accuracy")
    state.set_model(first)
    state.on_epoch_end(0, {"loss": 1.0, "val_accuracy": 0.5})
    backup = tmp_path / "backup" / "epoch-0001"
    # Killed between the two renames of a redone epoch: only the old folder.
    os.replace(backup, str(backup) + ".old")
    second = model()
    resumed = FinetuningState(str(tmp_path), "val_accuracy")
    assert resumed.restore(second) and resumed.epochs_done == 1
    assert os.listdir(tmp_path / "backup") == ["epoch-0001"]
    assert _max_diff(second.get_weights(), first.get_weights()) == 0.0


def test_a_resumed_squad_run_cuts_its_windows_once(tmp_path, monkeypatch, capsys):
    """Full SQuAD takes minutes to cut into windows: a resume must not do it
    twice (once to count the steps, once for the remaining epochs), nor count
    the train report's notes twice."""
    from albert_keras.tasks import squad_features
    from albert_keras.tasks.task_names import task_from_name

    out = str(tmp_path / "squad")
    train, dev = task_file("disfl_qa", "train.json"), task_file("disfl_qa", "dev.json")
    # 16 questions (their contexts need several windows of 64), 16 dev ones.
    options = dict(OPTIONS, epochs=2, max_train_examples=16, max_dev_examples=16)

    def run():
        task = task_from_name("squad", head="simple", sequence_length=64)
        return run_finetuning(task, train, dev, output_dir=out, **options)

    monkeypatch.setattr(atomic_files, "_replace", DiskFull("epoch-0002"))
    with pytest.raises(OSError, match="No space left"):
        run()
    monkeypatch.undo()
    made = []
    original = squad_features.squad_features

    def spy(examples, *args, **kwargs):
        features, contexts = original(examples, *args, **kwargs)
        made.append((kwargs["report"], features))
        return features, contexts

    monkeypatch.setattr(squad_features, "squad_features", spy)
    result = run()
    assert "Resuming after epoch 1" in capsys.readouterr().out
    assert result["epochs_run"] == 2 and result["resumed_after_epoch"] == 1
    reports = [report.path for report, _ in made]
    assert sorted(reports) == sorted([train, dev]), reports  # one cut per split
    # Each example with several windows noted once in metrics.json.
    features = next(f for report, f in made if report.path == train)
    several = int((np.bincount(features["example_index"]) > 1).sum())
    noted = result["data"]["train"]["noted"]
    assert noted["context split into several windows"] == several


def test_a_backup_of_another_model_is_refused_not_skipped(tmp_path):
    """Resumed with another label set (--force-resume), every backup was
    reported unreadable and a new run started in the folder, quietly."""
    from albert_keras.tasks.finetuning_state import FinetuningState

    def model(classes):
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(classes)])
        m.compile(optimizer="adam", loss="mse")
        return m

    state = FinetuningState(str(tmp_path), "val_accuracy")
    state.set_model(model(2))
    state.on_epoch_end(0, {"loss": 1.0, "val_accuracy": 0.5})
    with pytest.raises(ValueError, match="holds a model of other shapes") as error:
        FinetuningState(str(tmp_path), "val_accuracy").restore(model(3))
    assert "--overwrite" in str(error.value)
    again = FinetuningState(str(tmp_path), "val_accuracy")
    assert again.restore(model(2)) and again.epochs_done == 1
