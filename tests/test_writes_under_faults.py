"""Files written outside a training run are whole or absent after a fault.

Conversions, vocabularies and pretraining shards: a full disk at any file
(`write_faults`) leaves no half-written file, a complete folder stays
complete, and the rerun writes the same bytes.
"""

import os

import pytest
from write_faults import check_each_write_can_fail

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.sample_text import SPM_MODEL_PATH

DATA = os.path.join(os.path.dirname(__file__), "data", "pretrain")


@pytest.fixture(scope="module")
def pretrainer():
    return AlbertPretrainer(AlbertBackbone(AlbertConfig.from_preset("albert_tiny")))


@pytest.fixture(scope="module")
def wordpiece(tmp_path_factory):
    from albert_keras.tokenizers.vocabulary import build_wordpiece_vocabulary

    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    return build_wordpiece_vocabulary(
        [os.path.join(DATA, "zh_sanguo.txt")], path, vocab_size=400
    )


@pytest.mark.parametrize("kind", ["sentencepiece", "wordpiece"])
def test_transformers_folder(kind, pretrainer, wordpiece, monkeypatch, tmp_path):
    from checkpoints_convert import save_hf_checkpoint

    vocab = SPM_MODEL_PATH if kind == "sentencepiece" else wordpiece

    def write(folder):
        save_hf_checkpoint(pretrainer, folder, vocab=vocab)

    # model.safetensors, config.json and the tokenizer files.
    assert check_each_write_can_fail(monkeypatch, tmp_path, write) >= 4


def test_official_release(pretrainer, monkeypatch, tmp_path):
    from checkpoints_convert import save_official_checkpoint

    def write(folder):
        save_official_checkpoint(pretrainer, os.path.join(folder, "model.ckpt-best"))

    assert check_each_write_can_fail(monkeypatch, tmp_path, write) >= 1


def test_wordpiece_vocabulary(monkeypatch, tmp_path):
    from albert_keras.tokenizers.vocabulary import build_wordpiece_vocabulary

    def write(folder):
        path = os.path.join(folder, "vocab.txt")
        build_wordpiece_vocabulary(
            [os.path.join(DATA, "zh_sanguo.txt")], path, vocab_size=300
        )

    assert check_each_write_can_fail(monkeypatch, tmp_path, write) == 1


def test_pretraining_shards(monkeypatch, tmp_path):
    from albert_keras.pretraining.pretraining_data import create_pretraining_data

    def write(folder):
        create_pretraining_data(
            [os.path.join(DATA, "en_brown.txt")] * 2,
            folder + os.sep,
            max_seq_length=64,
            dupe_factor=1,
            num_shards=2,
            num_workers=1,
            verbose=False,
        )

    # Two per-file temporaries, then the two shards.
    assert check_each_write_can_fail(monkeypatch, tmp_path, write) >= 2


def test_albert_convert_keras_file_and_savedmodel(pretrainer, monkeypatch, tmp_path):
    """`albert-convert ... --output base.keras --saved-model DIR` over an
    earlier conversion: a full disk at any file of the `.keras`, or an
    export that fails, leaves the earlier files exactly as they were."""
    import keras
    from write_faults import failing_file_writes, files_in

    from checkpoints_convert import save_official_checkpoint
    from checkpoints_convert.cli import main

    release = str(tmp_path / "release")
    save_official_checkpoint(pretrainer, os.path.join(release, "model.ckpt-best"))
    out = tmp_path / "out"
    argv = [release, "--model", "backbone", "--output", str(out / "base.keras")]
    argv += ["--saved-model", str(out / "savedmodel")]
    assert main(argv) == 0
    with monkeypatch.context() as patch:
        opened = failing_file_writes(patch, str(out))
        assert main(argv) == 0
    assert any(path.endswith(".keras") for path in opened), opened
    before = files_in(str(out))
    saved_before = files_in(str(out / "savedmodel"))
    for at in range(1, len(opened) + 1):
        with monkeypatch.context() as patch:
            failing_file_writes(patch, str(out), at)
            assert main(argv) == 2
        assert files_in(str(out)) == before, f"fault at file {at}"
    real_export = keras.Model.export

    def export_then_fail(model, path, *args, **kwargs):
        real_export(model, path, *args, **kwargs)
        raise OSError(28, "No space left on device (injected)")

    monkeypatch.setattr(keras.Model, "export", export_then_fail)
    assert main(argv) == 2
    assert files_in(str(out / "savedmodel")) == saved_before
    assert sorted(os.listdir(out)) == ["base.keras", "savedmodel"]
    assert keras.saving.load_model(str(out / "base.keras")).count_params() > 0
