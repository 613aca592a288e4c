"""Pretraining ends at exactly --steps, saves where asked, and loses nothing."""

import errno
import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import micro_config, official_features

from albert_keras import AlbertPretrainer, atomic_files
from albert_keras.pretraining.pretrain_inputs import epoch_length
from albert_keras.pretraining.pretraining_run import run_pretraining
from albert_keras.pretraining.step_accounting import check_step_accounting
from albert_keras.training import LossCurvePlot
from albert_keras.training.pretraining_checkpoint import checkpoint_files

# Dropout 0 (the default): a resumed run's weights match an unbroken run's.
CONFIG = micro_config(50)
BATCH, LENGTH = 4, 12


def dataset(skip):
    """Synthetic official features, the same on every call."""
    features = official_features(32, LENGTH)
    return tf.data.Dataset.from_tensor_slices(features).repeat().batch(BATCH).skip(skip)


class Killed(Exception):
    pass


class KillAt(keras.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations) == self.step:
            raise Killed(f"killed at step {self.step}")


def _pretrain(out, steps=10, **options):
    keras.utils.set_random_seed(0)
    settings = dict(
        global_batch_size=BATCH,
        sequence_length=LENGTH,
        num_train_steps=steps,
        num_warmup_steps=0,
        learning_rate=1e-2,
        steps_per_epoch=5,
        save_every=3,
        keep_checkpoints=10,
        jit_compile=False,
        verbose=0,
    )
    return run_pretraining(dataset, CONFIG, str(out), **dict(settings, **options))


def _max_diff(ours, theirs):
    pairs = zip(ours, theirs, strict=True)
    return max(float(np.max(np.abs(a - b))) for a, b in pairs)


def _steps(out):
    return [int(name.rsplit("-", 1)[1]) for name in checkpoint_files(out)]


def _skip_curves(monkeypatch):
    """No curves.png (about a second a drawing) where nobody looks at it; the
    failed-final-write tests keep it, every write of theirs checked."""
    monkeypatch.setattr(LossCurvePlot, "draw", lambda self: None)


@pytest.fixture
def no_curves(monkeypatch):
    _skip_curves(monkeypatch)


def held_out():
    """A held-out set of other synthetic features, the same on every call."""
    features = official_features(12, LENGTH, seed=1)
    return tf.data.Dataset.from_tensor_slices(features).batch(BATCH)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """An unbroken 10-step run (2 epochs) that scores `held_out()`: the killed
    and the failed-checkpoint runs resume to its weights, and its scorings are
    counted and checked (one run for three tests)."""
    out = tmp_path_factory.mktemp("whole")
    evaluations = []
    evaluate = AlbertPretrainer.evaluate

    def counted(self, *args, **kwargs):
        evaluations.append(kwargs.get("steps"))
        return evaluate(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        _skip_curves(patch)
        patch.setattr(AlbertPretrainer, "evaluate", counted)
        run = _pretrain(out, eval_dataset=held_out())
    return dict(
        run,
        model=run["model"].get_weights(),
        pretrainer=run["model"],
        evaluations=evaluations,
        out=out,
        steps=_steps(out / "checkpoints"),
    )


@pytest.fixture
def no_text_export(monkeypatch):
    """No savedmodel/ for CLI runs whose savedmodel/ nobody loads (the slowest
    of a tiny run's outputs; tests/pretraining/test_pretrain_cli.py checks it)."""
    from albert_keras.pretraining import pretrain_outputs

    monkeypatch.setattr(pretrain_outputs, "export_text_model", lambda *a: None)


def test_sizes_that_would_overshoot_or_skip_a_save_are_refused():
    check_step_accounting(30, 10, 6, 2)
    with pytest.raises(
        ValueError, match=r"--save-every 7 \(save_every=7\) is not a multiple of"
    ):
        check_step_accounting(30, 10, 7, 2)
    with pytest.raises(ValueError, match=r"Use --steps 30 \(or 32\)"):
        check_step_accounting(31, 10, 6, 2)
    with pytest.raises(
        ValueError, match=r"`steps_per_epoch` \(--steps-per-epoch\) must be at least 1"
    ):
        check_step_accounting(30, 0, 6, 1)
    # The CLI's default epoch divides --steps.
    assert (epoch_length(400), epoch_length(30), epoch_length(250, 2)) == (100, 30, 50)


def test_a_killed_run_resumes_mid_epoch_and_ends_at_exactly_steps(
    tmp_path, whole, no_curves
):
    assert whole["global_step"] == 10
    assert whole["steps"] == [3, 6, 9, 10]
    out = tmp_path / "killed"
    with pytest.raises(Killed):
        _pretrain(out, extra_callbacks=[KillAt(7)])
    resumed = _pretrain(out)  # from the checkpoint of step 6, mid-epoch 2
    assert resumed["global_step"] == 10
    assert _steps(out / "checkpoints") == [3, 6, 9, 10]
    ours = resumed["model"].get_weights()
    theirs = whole["model"]
    assert _max_diff(ours, theirs) < 1e-6
    with open(out / "history.csv") as f:
        assert [line.split(",")[0] for line in f.read().splitlines()[1:]] == ["0", "1"]


def test_whole_executions_end_at_exactly_steps(tmp_path, no_curves):
    # 12 steps in epochs of 8, 4 steps per execution: Keras alone ran 16.
    run = _pretrain(
        tmp_path, 12, steps_per_epoch=8, save_every=4, steps_per_execution=4
    )
    assert run["global_step"] == 12
    assert _steps(tmp_path / "checkpoints") == [4, 8, 12]
    # Fewer steps than the checkpoint holds: refused (it printed "Already
    # trained for 12 steps", wrote the step-12 model as an 8-step run's).
    with pytest.raises(ValueError, match="at step 12, past num_train_steps=8"):
        _pretrain(tmp_path, 8, steps_per_epoch=8, save_every=4)


@pytest.mark.parametrize("name", ["metrics.json", "pretrainer.keras"])
def test_a_failed_final_write_is_redone_by_a_restart(
    tmp_path, monkeypatch, capsys, name
):
    def disk_full(source, target):
        if os.path.basename(target) == name:
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        os.replace(source, target)

    monkeypatch.setattr(atomic_files, "_replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        _pretrain(tmp_path, 6)
    monkeypatch.undo()
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]
    capsys.readouterr()
    run = _pretrain(tmp_path, 6)
    assert run["global_step"] == 6
    assert "Already trained for 6 steps" in capsys.readouterr().out
    model = keras.saving.load_model(tmp_path / "pretrainer.keras")
    assert len(model.get_weights()) == len(run["model"].get_weights())


def checkpoint_fails(step):
    """`CheckpointManager.save`, but the save of `step` fails half-way: its
    data file is written cut short, its index and the state file never."""
    real = tf.train.CheckpointManager.save

    def save(manager, checkpoint_number=None, **kw):
        if checkpoint_number != step:
            return real(manager, checkpoint_number=checkpoint_number, **kw)
        prefix = os.path.join(manager.directory, f"ckpt-{checkpoint_number}")
        with open(prefix + ".data-00000-of-00001", "wb") as f:
            f.write(b"\0" * 100)
        raise OSError(errno.ENOSPC, "No space left on device (injected)")

    return save


def test_a_failed_checkpoint_write_resumes_from_the_one_before(
    tmp_path, monkeypatch, whole, no_curves
):
    out = tmp_path / "failed"
    monkeypatch.setattr(tf.train.CheckpointManager, "save", checkpoint_fails(6))
    with pytest.raises(OSError, match="No space left"):
        _pretrain(out)
    monkeypatch.undo()
    resumed = _pretrain(out)  # from step 3; step 6 saved again
    assert resumed["global_step"] == 10
    assert _steps(out / "checkpoints") == [3, 6, 9, 10]
    ours, theirs = resumed["model"].get_weights(), whole["model"]
    assert _max_diff(ours, theirs) < 1e-6


def _cli_run(tmp_path, name, *extra):
    from albert_test_case import corpus_path

    from albert_keras.cli import main

    out = str(tmp_path / name)
    args = ["pretrain", "--input", corpus_path("en_brown.txt"), "--output-dir", out]
    args += ["--preset", "albert_tiny", "--steps", "2", "--max-seq-length", "32"]
    args += ["--max-predictions-per-seq", "4", "--batch-size", "4", "--no-jit"]
    code = main([*args, *extra])
    return code, out


def test_the_seed_fixes_the_weights_and_a_busy_folder_is_refused(
    tmp_path, capsys, no_text_export, no_curves
):
    from albert_keras.training import run_lock

    def weights(out):
        path = os.path.join(out, "pretrainer.keras")
        return keras.saving.load_model(path).get_weights()

    assert _cli_run(tmp_path, "a")[0] == 0
    assert _cli_run(tmp_path, "b")[0] == 0
    assert _cli_run(tmp_path, "c", "--seed", "7")[0] == 0
    a, b, c = (weights(tmp_path / n) for n in "abc")
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert _max_diff(a, c) > 1e-3
    # A second run on a folder in use: refused, naming the holder, nothing
    # of the first touched.
    before = sorted(os.listdir(tmp_path / "a"))
    with run_lock.RunLock(str(tmp_path / "a"), "the first run"):
        held = dict(run_lock._HELD)
        run_lock._HELD.clear()  # as another process sees it
        try:
            assert _cli_run(tmp_path, "a")[0] == 2
        finally:
            run_lock._HELD.update(held)
    err = capsys.readouterr().err
    assert "is in use by another run" in err and "the first run" in err
    assert sorted(os.listdir(tmp_path / "a")) == before


def test_a_run_whose_loss_became_nan_writes_no_model_and_is_not_finished(
    tmp_path, capsys, no_curves
):
    # It wrote a pretrainer.keras and savedmodel/ of NaN weights, printed
    # "Wrote ...", exited 0 and marked the run finished, so the command run
    # again said "nothing to do", not the resume NanGuard promised.
    lr = ["--learning-rate", "1e12", "--warmup-steps", "1", "--steps", "3"]
    code, out = _cli_run(tmp_path, "nan", *lr)
    captured = capsys.readouterr()
    assert code == 2 and "NanGuard: the loss became nan" in captured.out
    # Not "run the same command again": that resumes nothing (it was refused
    # as finished before, and a lower rate is another setting).
    assert "same command" not in captured.out
    assert "albert-keras pretrain: error: the loss became nan" in captured.err
    assert "--force-resume" in captured.err and "Wrote" not in captured.out
    assert not os.path.exists(os.path.join(out, "pretrainer.keras"))
    assert not os.path.exists(os.path.join(out, "savedmodel"))
    state = os.path.join(out, "run_state.json")
    assert not os.path.exists(state) or "finished_steps" not in open(state).read()


def test_a_finished_run_is_not_run_again_with_fewer_steps(tmp_path):
    """`--steps 2 --force-resume` on a run finished at 6 steps printed
    "Already trained for 6 steps", rebuilt savedmodel/ and recorded the run
    as finished at 2 steps with the step-6 model."""
    import argparse
    import json

    from albert_keras.pretraining.pretrain_settings import RUN_STATE, finished_run

    (tmp_path / RUN_STATE).write_text(json.dumps({"finished_steps": 6}))
    args = argparse.Namespace(output_dir=str(tmp_path), steps=2)
    with pytest.raises(ValueError, match="finished at 6 steps: --steps 2 cannot"):
        finished_run(args)
    assert finished_run(argparse.Namespace(output_dir=str(tmp_path), steps=6))
    assert not finished_run(argparse.Namespace(output_dir=str(tmp_path), steps=9))


def test_the_held_out_set_is_scored_once_per_epoch_not_again_at_the_end(whole):
    """The final scoring repeated the last epoch's validation on the same
    weights: a whole extra pass over the held-out set per run. metrics.json
    holds what a fresh scoring of the returned model gives."""
    calls = whole["evaluations"]
    assert len(calls) == 2, calls  # once after each of the two epochs
    again = whole["pretrainer"].evaluate(
        held_out().map(AlbertPretrainer.features_to_xy), verbose=0, return_dict=True
    )
    with open(whole["out"] / "metrics.json") as f:
        written = json.load(f)
    assert {k[len("eval_") :] for k in written if k.startswith("eval_")} == set(again)
    for key, value in again.items():
        assert np.isclose(written[f"eval_{key}"], value, rtol=1e-6, atol=1e-6), key
