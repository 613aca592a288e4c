"""Schedule, optimizer, checkpoint/resume and NaN guard of the training loop."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, AlbertPretrainer
from albert_keras.training import (
    LossCurvePlot,
    NanGuard,
    PretrainingCheckpoint,
    ThroughputLogger,
    WarmupPolynomialDecay,
    create_optimizer,
)

CONFIG = micro_config(vocab_size=50)


def official_rate(step, lr, total, warmup):
    """The official optimization.py: polynomial_decay(power=1) with linear warmup."""
    decayed = lr * (1.0 - min(step, total) / total)
    return lr * step / warmup if step < warmup else decayed


def test_schedule_matches_official_formula():
    schedule = WarmupPolynomialDecay(0.00176, decay_steps=1000, warmup_steps=100)
    for step in (0, 1, 50, 99, 100, 101, 500, 999, 1000, 2000):
        assert (
            abs(float(schedule(step)) - official_rate(step, 0.00176, 1000, 100)) < 1e-9
        )
    restored = WarmupPolynomialDecay.from_config(schedule.get_config())
    assert float(restored(321)) == float(schedule(321))


def test_weight_decay_skips_layer_norm_and_biases():
    model = AlbertBackbone(CONFIG)
    optimizer = create_optimizer("lamb", 0.1, 10, 0, weight_decay=0.5)
    before = {w.path: w.numpy().copy() for w in model.trainable_variables}
    zero = [tf.zeros_like(w) for w in model.trainable_variables]
    optimizer.apply_gradients(zip(zero, model.trainable_variables, strict=True))
    for w in model.trainable_variables:
        changed = np.any(w.numpy() != before[w.path])
        excluded = any(k in w.name for k in ("gamma", "beta", "bias"))
        # Zero bias/beta vectors cannot show decay; their exclusion is the rule.
        if excluded:
            assert not changed, w.path
        elif np.any(before[w.path] != 0):
            assert changed, w.path
    assert optimizer.epsilon == 1e-6 and optimizer.global_clipnorm == 1.0


def test_optimizer_rejects_a_bad_rate_or_decay():
    with pytest.raises(ValueError, match="learning rate must be 0 or more.*-0.1"):
        create_optimizer("lamb", -0.1, 10, 0)
    with pytest.raises(ValueError, match="weight decay must be 0 or more.*-0.01"):
        create_optimizer("adamw", 1e-3, 10, 0, weight_decay=-0.01)
    assert create_optimizer("lamb", 1e-3, 10, 0, weight_decay=0.1).weight_decay == 0.1


def batches(steps, seed=0):
    rng = np.random.default_rng(seed)
    b, t, p = 4, 12, 3
    x = {
        "token_ids": rng.integers(0, 50, (steps * b, t)).astype("int32"),
        "segment_ids": np.zeros((steps * b, t), "int32"),
        "padding_mask": np.ones((steps * b, t), "int32"),
        "mask_positions": rng.integers(0, t, (steps * b, p)).astype("int32"),
    }
    y = {
        "mask_ids": rng.integers(0, 50, (steps * b, p)).astype("int32"),
        "mask_weights": np.ones((steps * b, p), "float32"),
        "sop_labels": rng.integers(0, 2, (steps * b,)).astype("int32"),
    }
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(b)


def make_model(optimizer=None):
    """The seeded pretrainer, with LAMB unless another `optimizer` is given."""
    keras.utils.set_random_seed(1)
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    model.compile(optimizer=optimizer or create_optimizer("lamb", 1e-2, 8, 2))
    return model


def test_resume_after_a_stop_gives_the_same_weights(tmp_path):
    # Uninterrupted: 8 steps.
    straight = make_model()
    straight.fit(batches(8), epochs=1, verbose=0, shuffle=False)
    # Interrupted after 5 steps (checkpoints every 2 and at the end), resumed
    # by a fresh process-like model that skips the data already seen.
    directory = str(tmp_path / "ckpt")
    first = make_model()
    callback = PretrainingCheckpoint(directory, save_every=2, keep=2)
    first.fit(
        batches(8).take(5), epochs=1, verbose=0, callbacks=[callback], shuffle=False
    )
    assert sorted(os.listdir(directory)).count("checkpoint") == 1
    resumed = make_model()
    callback = PretrainingCheckpoint(directory, save_every=2, keep=2)
    step = callback.restore(resumed)
    assert step == 5
    resumed.fit(
        batches(8).skip(step), epochs=1, verbose=0, callbacks=[callback], shuffle=False
    )
    assert int(resumed.optimizer.iterations.numpy()) == 8
    for a, b in zip(straight.get_weights(), resumed.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    # Only the last `keep` checkpoints remain.
    state = tf.train.get_checkpoint_state(directory)
    assert len(state.all_model_checkpoint_paths) == 2


def test_nan_stops_and_keeps_the_last_good_checkpoint(tmp_path, capsys):
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    model.compile(optimizer=keras.optimizers.SGD(1e4))
    directory = str(tmp_path / "ckpt")
    guard = NanGuard()
    callback = PretrainingCheckpoint(directory, save_every=1, keep=50)
    model.fit(
        batches(30), epochs=1, verbose=0, callbacks=[guard, callback], shuffle=False
    )
    assert guard.failed_step is not None, "the loss never diverged"
    assert "NanGuard: the loss became" in capsys.readouterr().out
    latest = tf.train.latest_checkpoint(directory)
    assert int(latest.rsplit("-", 1)[1]) < guard.failed_step
    restored = AlbertPretrainer(AlbertBackbone(CONFIG))
    restored.compile(optimizer=keras.optimizers.SGD(1e4))
    PretrainingCheckpoint(directory).restore(restored)
    assert all(np.isfinite(w).all() for w in restored.get_weights())


def test_throughput_and_plot(tmp_path):
    # SGD, the cheapest step: the optimizer is no part of what is measured
    # and drawn.
    model = make_model(keras.optimizers.SGD(1e-2))
    path = str(tmp_path / "curves.png")
    history = model.fit(
        batches(4),
        epochs=2,
        verbose=0,
        callbacks=[ThroughputLogger(4, 12), LossCurvePlot(path)],
        shuffle=False,
    )
    assert history.history["seq_per_sec"][-1] > 0
    assert (
        history.history["tokens_per_sec"][-1] == history.history["seq_per_sec"][-1] * 12
    )
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_strategy_flag_errors_name_the_problem_and_the_fix():
    import pytest

    from albert_keras.training import get_strategy

    with pytest.raises(ValueError, match="Unknown strategy.*'gpu'.*Allowed.*tpu"):
        get_strategy("gpu")
    # No TPU here: a local TPU (TPU VM) is not found, and a TPU name does not
    # resolve; both say which flag to pass.
    with pytest.raises(RuntimeError, match="a local TPU.*--tpu NAME.*--strategy auto"):
        get_strategy("tpu")
    with pytest.raises(RuntimeError, match="TPU 'no-such-tpu'.*--tpu local"):
        get_strategy("tpu", "no-such-tpu")
    assert get_strategy("one_device").num_replicas_in_sync == 1


def test_worker_private_dir_is_fixed_per_task_and_removed(tmp_path, monkeypatch):
    import json

    from albert_keras.training.worker_files import (
        remove_worker_private_dir,
        worker_private_dir,
    )

    run = str(tmp_path / "run")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert worker_private_dir(run) == run  # alone: the chief writes the run
    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    for index, expected in [(0, run), (1, os.path.join(run, ".worker-1"))]:
        task = {"type": "worker", "index": index}
        monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": task}))
        assert worker_private_dir(run) == expected
    # Worker 1's folder goes; the run's own files stay.
    os.makedirs(os.path.join(run, ".worker-1"))
    open(os.path.join(run, "metrics.json"), "w").close()
    remove_worker_private_dir(run)
    assert os.listdir(run) == ["metrics.json"]
    # With a "chief" task in the cluster, worker 0 is not the chief.
    chief = {"chief": ["127.0.0.1:3"], **cluster}
    task = {"type": "worker", "index": 0}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": chief, "task": task}))
    assert worker_private_dir(run) == os.path.join(run, ".worker-0")
