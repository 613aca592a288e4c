"""A transformers or keras-hub folder missing one of its files is named as such.

A transformers folder without its config.json (or its weights), or a
keras-hub preset without model.weights.h5, was read by `albert-convert` as
an official TF1 folder: "no *.index file ... (TF1 Hub module)", a fix for
another format. Now the error says which kind the folder looks like and
which file is missing.
"""

import os

import pytest

from albert_keras import AlbertBackbone, AlbertConfig
from checkpoints_convert import save_hf_checkpoint
from checkpoints_convert.cli import main as convert_main

TINY = {"vocab_size": 100, "embedding_size": 8, "hidden_size": 16}
TINY.update(num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)


def _convert_error(folder, tmp_path, capsys):
    output = str(tmp_path / "out.keras")
    assert convert_main([folder, "--output", output]) == 2
    assert not os.path.exists(output)
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "removed, named",
    [("config.json", "no config.json"), ("model.safetensors", "no weights")],
)
def test_a_transformers_folder_missing_a_file(removed, named, tmp_path, capsys):
    folder = str(tmp_path / "hf")
    save_hf_checkpoint(AlbertBackbone(AlbertConfig(**TINY)), folder)
    os.remove(os.path.join(folder, removed))
    err = _convert_error(folder, tmp_path, capsys)
    assert "a transformers folder" in err and named in err, err
    assert "*.index" not in err, err
    with pytest.raises(ValueError, match=named):
        AlbertBackbone.from_preset(folder)


def test_a_keras_hub_preset_missing_its_weights(tmp_path, capsys):
    pytest.importorskip("keras_hub")
    folder = str(tmp_path / "hub")
    AlbertBackbone(AlbertConfig(**TINY)).save_to_preset(folder)
    os.remove(os.path.join(folder, "model.weights.h5"))
    err = _convert_error(folder, tmp_path, capsys)
    assert "a keras-hub preset folder" in err and "model.weights.h5" in err, err
    assert "*.index" not in err, err
