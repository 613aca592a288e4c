"""LoRA fine-tuning: what trains, what is saved, and a resume after a kill."""

import contextlib
import io
import os

import keras
import numpy as np
import pytest
from albert_test_case import TINY_FINETUNING, task_file

from albert_keras import atomic_files
from albert_keras.config import AlbertConfig
from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_run import run_finetuning

OPTIONS = dict(TINY_FINETUNING, lora_rank=2)
TRAIN = task_file("rt_sentiment", "train.jsonl")
DEV = task_file("rt_sentiment", "dev.jsonl")


def _inputs(batch, length, vocabulary_size, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocabulary_size, (batch, length)).astype("int32")
    return {
        "token_ids": ids,
        "segment_ids": np.zeros_like(ids),
        "padding_mask": np.ones_like(ids),
    }


def test_enable_lora_trains_the_adapters_only():
    # Two groups: two unique attention layers, each with its own adapters.
    config = AlbertConfig.from_preset("albert_tiny", num_hidden_groups=2)
    backbone = AlbertBackbone(config)
    ins = {
        name: keras.Input((None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    logits = keras.layers.Dense(3, name="head")(backbone(ins)["pooled_output"])
    model = keras.Model(ins, logits)

    rank, hidden = 2, config.hidden_size
    adapters = backbone.enable_lora(rank)
    # A [H, r] and B [r, H], for query and value, in each of the 2 groups.
    assert adapters == rank * (hidden + hidden) * 2 * 2 == 1024
    head = hidden * 3 + 3
    trained = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    assert trained == adapters + head == 1024 + 195
    names = sorted(v.path.split("/")[-1] for v in backbone.trainable_weights)
    assert names == ["lora_kernel_a"] * 4 + ["lora_kernel_b"] * 4

    frozen = {v.path: v.numpy().copy() for v in backbone.non_trainable_weights}
    adapters_before = {v.path: v.numpy().copy() for v in backbone.trainable_weights}
    x = _inputs(8, 12, config.vocab_size)
    y = np.arange(8) % 3
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    for variable in backbone.non_trainable_weights:
        if "seed_generator_state" in variable.path:
            continue  # dropout's random state moves on
        np.testing.assert_array_equal(variable.numpy(), frozen[variable.path])
    for variable in backbone.trainable_weights:
        change = np.max(np.abs(variable.numpy() - adapters_before[variable.path]))
        assert change > 0, variable.path  # A moves once B is non-zero


class RecordingTask(ClassificationTask):
    """The dev score rises every step (every epoch is the best, and saved);
    the live model's dev logits and adapters are kept at each evaluation."""

    def scores(self, model, data, dataset):
        scores = super().scores(model, data, dataset)
        self.dev_dataset = dataset
        self.dev_logits = np.asarray(model.predict(dataset, verbose=0)["logits"])
        self.adapter_b = max(
            float(np.max(np.abs(v.numpy())))
            for v in model.trainable_weights
            if "lora_kernel_b" in v.path
        )
        scores["accuracy"] = float(model.optimizer.iterations) / 1000.0
        return scores


def _task():
    return RecordingTask(sequence_length=32)


@pytest.mark.parametrize("rank", [64, 1000])
def test_enable_lora_refuses_a_rank_of_the_hidden_size_or_more(rank):
    """--lora-rank 1000 on H=64 trained 256,130 of 556,098 parameters: adapters
    larger than the kernels they adapt, quietly."""
    backbone = AlbertBackbone("albert_tiny")
    with pytest.raises(ValueError) as error:
        backbone.enable_lora(rank)
    message = str(error.value)
    assert f"rank={rank}" in message and "hidden size 64" in message, message
    assert "at most 63" in message and "--lora-rank 0" in message, message


@pytest.mark.parametrize("rank", [0, 2.5, "4", True])
def test_enable_lora_refuses_a_rank_that_is_not_a_positive_int(rank):
    # 2.5 and "4" used to fail inside Keras ("Cannot convert '(64, 2.5)' to a
    # shape", "'<' not supported"), True to train rank-1 adapters.
    backbone = AlbertBackbone("albert_tiny")
    trainable = len(backbone.trainable_weights)
    with pytest.raises(ValueError, match=f"rank={rank!r}"):
        backbone.enable_lora(rank)
    assert len(backbone.trainable_weights) == trainable  # nothing frozen


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A LoRA run that never failed: its task, result, folder and printout."""
    out = str(tmp_path_factory.mktemp("lora"))
    task = _task()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = run_finetuning(task, TRAIN, DEV, output_dir=out, **OPTIONS)
    return task, result, out, printed.getvalue()


def test_a_lora_run_learns_and_saves_a_plain_model(reference, capsys):
    task, result, out, _ = reference
    losses = result["epochs"]["loss"]
    assert losses[-1] < losses[0], losses
    assert result["best_epoch"] == OPTIONS["epochs"]
    # The adapters were trained: the merged model is not the initial one.
    assert task.adapter_b > 1e-4
    loaded = keras.saving.load_model(os.path.join(out, "best.keras"))
    assert not any(
        getattr(layer, "lora_enabled", False) for layer in loaded._flatten_layers()
    )
    logits = np.asarray(loaded.predict(task.dev_dataset, verbose=0)["logits"])
    np.testing.assert_allclose(logits, task.dev_logits, atol=1e-5, rtol=0)


def test_the_run_prints_what_it_trains(reference):
    printed = reference[3]  # the reference run's printout
    # albert_tiny: H=64, one group; the head: pooled 64 -> 2 classes.
    adapters = 2 * (64 + 64) * 2 * 1
    line = next(t for t in printed.splitlines() if t.startswith("LoRA rank 2:"))
    trained = int(line.split(": ")[1].split(" of ")[0].replace(",", ""))
    assert trained == adapters + 64 * 2 + 2, line


def _fail_backup_of_epoch_3(source, target):
    if os.path.basename(target) == "epoch-0003":
        raise OSError(28, "No space left on device (injected)")
    os.replace(source, target)


def test_a_killed_lora_run_resumes_exactly(reference, tmp_path, monkeypatch, capsys):
    _, expected, reference_out, _ = reference
    out = str(tmp_path / "run")
    monkeypatch.setattr(atomic_files, "_replace", _fail_backup_of_epoch_3)
    with pytest.raises(OSError, match="No space left"):
        run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
    monkeypatch.undo()
    assert os.path.isfile(os.path.join(out, "backup", "epoch-0002", "lora.npz"))
    result = run_finetuning(_task(), TRAIN, DEV, output_dir=out, **OPTIONS)
    assert "Resuming after epoch 2" in capsys.readouterr().out
    # Without the adapters restored (a weights file alone zeroes them) the
    # third epoch would train the head only and its loss would differ.
    assert result["epochs"]["loss"] == pytest.approx(
        expected["epochs"]["loss"], rel=1e-5
    )
    saved = keras.saving.load_model(os.path.join(out, "best.keras")).get_weights()
    wanted = keras.saving.load_model(
        os.path.join(reference_out, "best.keras")
    ).get_weights()
    for a, b in zip(saved, wanted, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_a_lora_runs_best_keras_loads_without_an_optimizer_warning(reference):
    """best.keras held the adapters' optimizer state: every load of the
    merged model warned "Skipping variable loading for optimizer"."""
    import warnings

    _, _, out, _ = reference
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        keras.saving.load_model(os.path.join(out, "best.keras"))
    assert not [w for w in caught if "optimizer" in str(w.message)], [
        str(w.message) for w in caught
    ]


def test_full_fine_tuning_of_an_int8_init_is_refused_lora_trains(tmp_path, capsys):
    """An int8 --init trained without a word, its int8 kernels frozen by Keras:
    only the LayerNorms, biases and head learned."""
    import shutil

    from albert_keras import AlbertClassifier
    from albert_keras.sample_text import SPM_MODEL_PATH

    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    model.quantize("int8")
    init = str(tmp_path / "int8.keras")
    model.save(init)
    shutil.copy(SPM_MODEL_PATH, tmp_path / "int8.model")
    options = dict(OPTIONS, init=init, epochs=1, max_train_examples=16)
    options.update(max_dev_examples=8, lora_rank=None)
    task = lambda: ClassificationTask(sequence_length=16)  # noqa: E731
    with pytest.raises(ValueError) as error:
        run_finetuning(task(), TRAIN, DEV, output_dir=str(tmp_path / "a"), **options)
    message = str(error.value)
    assert "is int8-quantized" in message and "--lora-rank" in message, message
    assert not os.path.exists(tmp_path / "a" / "best.keras")
    options["lora_rank"] = 2  # adapters over the int8 kernels (QLoRA) train
    run_finetuning(task(), TRAIN, DEV, output_dir=str(tmp_path / "b"), **options)
    assert os.path.isfile(tmp_path / "b" / "best.keras")


def test_force_resume_with_another_lora_rank_is_refused(reference, tmp_path):
    """--force-resume with another --lora-rank failed naming "another label
    set, task or --init"; from a full run's backups it started over."""
    import shutil

    _, _, out, _ = reference
    copy = str(tmp_path / "copy")
    shutil.copytree(out, copy)
    options = dict(OPTIONS, lora_rank=3, force_resume=True)
    with pytest.raises(ValueError, match="--lora-rank"):
        run_finetuning(_task(), TRAIN, DEV, output_dir=copy, **options)
    full = str(tmp_path / "full")
    options = dict(OPTIONS, lora_rank=None, epochs=1, max_train_examples=16)
    options.update(max_dev_examples=8)
    run_finetuning(
        ClassificationTask(sequence_length=32), TRAIN, DEV, output_dir=full, **options
    )
    options.update(lora_rank=2, force_resume=True, epochs=2)
    with pytest.raises(ValueError, match="--lora-rank"):
        run_finetuning(_task(), TRAIN, DEV, output_dir=full, **options)
