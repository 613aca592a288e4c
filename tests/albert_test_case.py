"""Drivers every layer and model test uses (keras-hub's `run_layer_test` idea).

`run_layer_test` and `run_model_test` give each class the same checks in a few
lines: config round trip with identical outputs, symbolic vs eager calls,
`.keras` save/load with identical outputs, and a `fit` step that changes the
weights. `task_file` and `corpus_path` find the small real data of `tests/data`;
`micro_config` and `official_features` are the tiny model and random data of
the training and pretraining-run tests.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import keras
import numpy as np

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


# `run_finetuning` options of the small, fast fine-tuning runs on the
# rt_sentiment fixture (crash safety, LoRA).
TINY_FINETUNING = dict(
    init="albert_tiny",
    epochs=3,
    batch_size=16,
    learning_rate=2e-3,
    warmup_fraction=0.0,
    max_train_examples=48,
    max_dev_examples=32,
    patience=3,
    export=False,
    verbose=0,
    jit_compile=False,
)


def data_dir() -> str:
    """The repository's `tests/data`: small slices of real text and task data
    (see its README for what each file is and where it comes from)."""
    return DATA_DIR


def task_file(name: str, split: str) -> str:
    """A file of `tests/data/tasks`, e.g. task_file("rt_sentiment", "dev.jsonl")."""
    return os.path.join(DATA_DIR, "tasks", name, split)


def corpus_path(name: str) -> str:
    """A pretraining text of `tests/data/pretrain`, e.g. "en_brown.txt".

    "en_austen.txt" is the package's embedded corpus (all six novels, gzipped):
    it ships with albert_keras, so tests/data holds no copy.
    """
    if name == "en_austen.txt":
        from albert_keras.sample_text import CORPUS_PATH

        return CORPUS_PATH
    return os.path.join(DATA_DIR, "pretrain", name)


def corpus_paragraphs(name: str) -> list[str]:
    """The non-empty lines (paragraphs) of `corpus_path(name)`, in order."""
    path = corpus_path(name)
    with (gzip.open if path.endswith(".gz") else open)(
        path, "rt", encoding="utf-8"
    ) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def micro_config(vocab_size=60, **changes):
    """The smallest useful ALBERT: E=8, H=16, 2 layers, 2 heads (tests of heads and
    training, where the encoder's size does not matter)."""
    from albert_keras import AlbertConfig

    values = dict(
        vocab_size=vocab_size,
        embedding_size=8,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
    )
    return AlbertConfig(**{**values, **changes})


def official_features(rows, length=12, predictions=3, vocab_size=50, seed=0):
    """Random pretraining features under the official record names (`input_ids`,
    ..., `next_sentence_labels`), as `create_pretraining_data.py` writes them:
    one segment, no padding, every prediction weighted; the same on every call.
    With `micro_config(50)`, the data of the pretraining-run tests."""
    rng = np.random.default_rng(seed)
    shape, masked = (rows, length), (rows, predictions)
    return {
        "input_ids": rng.integers(0, vocab_size, shape).astype("int32"),
        "input_mask": np.ones(shape, "int32"),
        "segment_ids": np.zeros(shape, "int32"),
        "masked_lm_positions": rng.integers(0, length, masked).astype("int32"),
        "masked_lm_ids": rng.integers(0, vocab_size, masked).astype("int32"),
        "masked_lm_weights": np.ones(masked, "float32"),
        "next_sentence_labels": rng.integers(0, 2, (rows, 1)).astype("int32"),
    }


def random_inputs(batch=2, length=8, vocab=100, seed=0, pad_last=True):
    """Backbone inputs with two segments and some padding in later rows."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(0, vocab, (batch, length)).astype("int32")
    segment_ids = np.zeros((batch, length), "int32")
    segment_ids[:, length // 2 :] = 1
    padding_mask = np.ones((batch, length), "int32")
    if pad_last:
        for row in range(1, batch):
            padding_mask[row, length - row :] = 0
    return {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": padding_mask,
    }


def max_abs_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, "float64") - np.asarray(b, "float64"))))


def to_numpy(tree):
    return keras.tree.map_structure(keras.ops.convert_to_numpy, tree)


def assert_trees_close(a, b, atol=0.0):
    a, b = to_numpy(a), to_numpy(b)
    flat_a, flat_b = keras.tree.flatten(a), keras.tree.flatten(b)
    assert len(flat_a) == len(flat_b)
    for x, y in zip(flat_a, flat_b, strict=True):
        assert x.shape == y.shape
        assert max_abs_diff(x, y) <= atol, max_abs_diff(x, y)


def run_layer_test(layer, call_args, call_kwargs=None):
    """Config round trip and symbolic shapes of a layer; returns its output."""
    call_kwargs = call_kwargs or {}
    output = layer(*call_args, **call_kwargs)
    clone = layer.__class__.from_config(layer.get_config())
    clone(*call_args, **call_kwargs)  # build
    clone.set_weights(layer.get_weights())
    assert_trees_close(output, clone(*call_args, **call_kwargs))
    assert clone.get_config() == layer.get_config()
    return output


def run_model_test(model, x, y=None, loss=None, atol=0.0):
    """Save/load, symbolic vs eager, and (with `y`) a fit step that moves weights."""
    eager = model(x, training=False)
    predicted = model.predict(x, verbose=0)
    assert_trees_close(eager, predicted, atol=1e-5)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        restored = keras.saving.load_model(path)
    assert_trees_close(eager, restored(x, training=False), atol=atol)
    clone = model.__class__.from_config(model.get_config())
    assert clone.count_params() == model.count_params()
    if y is not None:
        before = [w.copy() for w in model.get_weights()]
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
        history = model.fit(x, y, epochs=2, batch_size=len(x["token_ids"]), verbose=0)
        assert np.all(np.isfinite(history.history["loss"]))
        moved = [
            np.any(a != b) for a, b in zip(before, model.get_weights(), strict=True)
        ]
        assert all(moved) or sum(moved) > len(moved) // 2
        return history
    return None


def python_json(script: str, *args) -> dict:
    """The JSON a fresh Python (TensorFlow backend) prints last for `script`:
    for what one process must measure alone, e.g. its peak memory."""
    return subprocess_json(["-c", textwrap.dedent(script), *args])


def subprocess_json(argv) -> dict:
    """The JSON a fresh Python (TensorFlow backend) run with `argv` (its
    arguments: a script path or `-c CODE`, then the script's) prints last."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow")
    out = subprocess.run(
        [sys.executable, *argv],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def fast_xla_flags() -> str:
    """XLA_FLAGS for a fresh Python: the inherited ones (conftest.py's thread
    share) and XLA's CPU code unoptimized, compiled in a fraction of the time
    (the tiny test models run about as fast)."""
    flags = [os.environ.get("XLA_FLAGS", ""), "--xla_backend_optimization_level=0"]
    return " ".join(flags).strip()


def remat_spy(monkeypatch) -> list:
    """The functions Keras recomputes in the backward pass (`keras.remat`),
    recorded into the returned list while the test runs."""
    from keras.src.layers import layer as keras_layer

    recomputed = []
    original = keras_layer.remat.remat

    def spy(call):
        recomputed.append(call)
        return original(call)

    monkeypatch.setattr(keras_layer.remat, "remat", spy)
    monkeypatch.setattr(keras, "remat", spy)
    return recomputed


def tiny_finetune(tmp_path, rows, *flags, task="classify") -> int:
    """`albert-keras finetune` on `rows` (train and dev) from a random
    albert_tiny, one epoch at 16 tokens, into `tmp_path / "run"`: its exit
    status. Later `flags` override these (argparse keeps the last)."""
    from albert_keras.cli import main

    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ["finetune", "--task", task, "--train", str(train), "--dev", str(train)]
    args += ["--init", "albert_tiny", "--output-dir", str(tmp_path / "run")]
    args += ["--epochs", "1", "--max-seq-length", "16", "--no-export", "--no-jit"]
    return main([*args, *flags])


def tiny_classifier_fit(folder, rows, **fields):
    """`ClassificationTask(num_classes=2, sequence_length=16, **fields)` fitted
    one epoch (batch 8, no XLA, no export) on `rows`, the first 8 as dev,
    from a `micro_config(8000)` backbone seeded 0: the task, the result and
    the task config recorded in `run_settings.json`."""
    from albert_keras import AlbertBackbone
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks import ClassificationTask

    task = ClassificationTask(num_classes=2, sequence_length=16, **fields)
    keras.utils.set_random_seed(0)
    result = task.fit(
        AlbertBackbone(micro_config(8000)), rows, rows[:8], str(folder),
        vocab=SPM_MODEL_PATH, epochs=1, batch_size=8, export=False,
        jit_compile=False,
    )  # fmt: skip
    with open(os.path.join(folder, "run_settings.json")) as f:
        return task, result, json.load(f)["task"]["config"]
