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
