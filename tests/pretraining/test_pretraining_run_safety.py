"""Pretraining ends at exactly --steps, saves where asked, and loses nothing."""

import errno
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras import AlbertConfig
from albert_keras.pretraining.pretrain_inputs import epoch_length
from albert_keras.pretraining.pretraining_run import (
    check_step_accounting,
    run_pretraining,
)
from albert_keras import atomic_files
from albert_keras.training.pretraining_checkpoint import checkpoint_files

CONFIG = AlbertConfig(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)
BATCH, LENGTH, PREDICTIONS = 4, 12, 3


def dataset(skip):
    """Synthetic official features, the same on every call."""
    rng = np.random.default_rng(0)
    n = 32
    features = {
        "input_ids": rng.integers(0, 50, (n, LENGTH)).astype("int32"),
        "input_mask": np.ones((n, LENGTH), "int32"),
        "segment_ids": np.zeros((n, LENGTH), "int32"),
        "masked_lm_positions": rng.integers(0, LENGTH, (n, PREDICTIONS)).astype(
            "int32"
        ),
        "masked_lm_ids": rng.integers(0, 50, (n, PREDICTIONS)).astype("int32"),
        "masked_lm_weights": np.ones((n, PREDICTIONS), "float32"),
        "next_sentence_labels": rng.integers(0, 2, (n, 1)).astype("int32"),
    }
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


def _steps(out):
    return [int(name.rsplit("-", 1)[1]) for name in checkpoint_files(out)]


def test_sizes_that_would_overshoot_or_skip_a_save_are_refused():
    check_step_accounting(30, 10, 6, 2)
    with pytest.raises(ValueError, match="save_every=7 is not a multiple of"):
        check_step_accounting(30, 10, 7, 2)
    with pytest.raises(ValueError, match=r"Use steps=30 \(or 32\)"):
        check_step_accounting(31, 10, 6, 2)
    with pytest.raises(ValueError, match="`steps_per_epoch` must be at least 1"):
        check_step_accounting(30, 0, 6, 1)
    # The CLI's default epoch divides --steps.
    assert (epoch_length(400), epoch_length(30), epoch_length(250, 2)) == (100, 30, 50)


def test_a_killed_run_resumes_mid_epoch_and_ends_at_exactly_steps(tmp_path):
    whole = _pretrain(tmp_path / "whole")
    assert whole["global_step"] == 10
    assert _steps(tmp_path / "whole" / "checkpoints") == [3, 6, 9, 10]
    out = tmp_path / "killed"
    with pytest.raises(Killed):
        _pretrain(out, extra_callbacks=[KillAt(7)])
    resumed = _pretrain(out)  # from the checkpoint of step 6, mid-epoch 2
    assert resumed["global_step"] == 10
    assert _steps(out / "checkpoints") == [3, 6, 9, 10]
    ours = resumed["model"].get_weights()
    theirs = whole["model"].get_weights()
    assert (
        max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs, strict=True))
        < 1e-6
    )
    with open(out / "history.csv") as f:
        assert [line.split(",")[0] for line in f.read().splitlines()[1:]] == ["0", "1"]


def test_whole_executions_end_at_exactly_steps(tmp_path):
    # 12 steps in epochs of 8, 4 steps per execution: Keras alone ran 16.
    run = _pretrain(
        tmp_path, 12, steps_per_epoch=8, save_every=4, steps_per_execution=4
    )
    assert run["global_step"] == 12
    assert _steps(tmp_path / "checkpoints") == [4, 8, 12]


@pytest.mark.parametrize("name", ["metrics.json", "pretrainer.keras"])
def test_a_failed_final_write_is_redone_by_a_restart(tmp_path, monkeypatch, name):
    def disk_full(source, target):
        if os.path.basename(target) == name:
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        os.replace(source, target)

    monkeypatch.setattr(atomic_files, "_replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        _pretrain(tmp_path, 6)
    monkeypatch.undo()
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]
    run = _pretrain(tmp_path, 6)
    assert run["global_step"] == 6
    model = keras.saving.load_model(tmp_path / "pretrainer.keras")
    assert len(model.get_weights()) == len(run["model"].get_weights())
