"""What `albert-convert` does with an --output folder that holds other files.

A keras-hub preset folder is written whole and put in place by one rename:
an --output that already held a fine-tuning run (its best.keras, the very
SOURCE of the conversion) was replaced with it, the run deleted without a
word. A folder with files that are not a preset's is now refused, naming
them; an earlier preset folder is still replaced.
"""

import os

import pytest

from albert_keras import AlbertBackbone, AlbertConfig
from checkpoints_convert.cli import main as convert_main

pytest.importorskip("keras_hub")  # in the test extra

TINY = {"vocab_size": 100, "embedding_size": 8, "hidden_size": 16}
TINY.update(num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)


def _backbone_file(folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "best.keras")
    AlbertBackbone(AlbertConfig(**TINY)).save(path)
    return path


def test_keras_hub_output_holding_other_files_is_refused(tmp_path, capsys):
    run = str(tmp_path / "run")
    source = _backbone_file(run)
    with open(os.path.join(run, "metrics.json"), "w") as f:
        f.write("{}")
    assert convert_main([source, "--to-keras-hub", "--output", run]) == 2
    err = capsys.readouterr().err
    assert "holds files that are not a keras-hub preset's" in err, err
    assert "best.keras" in err and "metrics.json" in err, err
    assert sorted(os.listdir(run)) == ["best.keras", "metrics.json"]


def test_an_earlier_keras_hub_preset_is_replaced(tmp_path):
    source = _backbone_file(str(tmp_path / "run"))
    preset = str(tmp_path / "preset")
    assert convert_main([source, "--to-keras-hub", "--output", preset]) == 0
    assert convert_main([source, "--to-keras-hub", "--output", preset]) == 0
    assert "model.weights.h5" in os.listdir(preset)


def test_a_transformers_folder_written_again_keeps_no_stale_tokenizer(tmp_path):
    """--to-hf into an earlier conversion's folder left its spiece.model and
    tokenizer.json beside the new weights and vocab.txt: transformers then
    loaded the old tokenizer (or failed: "Missing [UNK] token")."""
    from albert_keras.sample_text import SPM_MODEL_PATH
    from checkpoints_convert import save_hf_checkpoint

    folder = str(tmp_path / "hf")
    model = AlbertBackbone(AlbertConfig(**dict(TINY, vocab_size=8000)))
    save_hf_checkpoint(model, folder, vocab=SPM_MODEL_PATH)
    assert {"spiece.model", "tokenizer.json"} <= set(os.listdir(folder))
    (tmp_path / "hf" / "pytorch_model.bin").write_bytes(b"old weights")
    (tmp_path / "hf" / "notes.txt").write_text("mine")
    words = tmp_path / "vocab.txt"
    words.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
    save_hf_checkpoint(AlbertBackbone(AlbertConfig(**TINY)), folder, vocab=str(words))
    assert sorted(os.listdir(folder)) == [
        "config.json",
        "model.safetensors",
        "notes.txt",
        "tokenizer_config.json",
        "vocab.txt",
    ]


def test_hf_output_beside_other_files_names_only_what_it_wrote(tmp_path, capsys):
    """`--to-hf --output run` (the run's own folder) said it wrote best.keras
    and notes.txt too: the line listed the whole folder."""
    run = str(tmp_path / "run")
    source = _backbone_file(run)
    with open(os.path.join(run, "notes.txt"), "w") as f:
        f.write("mine\n")
    assert convert_main([source, "--to-hf", "--output", run]) == 0
    wrote = [line for line in capsys.readouterr().err.splitlines() if "wrote" in line]
    assert wrote == [f"wrote config.json, model.safetensors in {run}"], wrote
    assert sorted(os.listdir(run)) == [
        "best.keras",
        "config.json",
        "model.safetensors",
        "notes.txt",
    ]


def test_a_checkpoint_of_another_kind_in_the_output_is_refused(tmp_path, capsys):
    """--to-hf into a --to-official folder (or the reverse) wrote the two
    checkpoints side by side; converting the folder back then read one of
    them without a word."""
    from checkpoints_convert import save_hf_checkpoint, save_official_checkpoint
    from checkpoints_convert.conversion_error import ConversionError

    model = AlbertBackbone(AlbertConfig(**TINY))
    official, hf = str(tmp_path / "official"), str(tmp_path / "hf")
    save_official_checkpoint(model, os.path.join(official, "model.ckpt-best"))
    save_hf_checkpoint(model, hf)
    before = {folder: sorted(os.listdir(folder)) for folder in (official, hf)}
    with pytest.raises(ConversionError, match="holds an official.*a transformers"):
        save_hf_checkpoint(model, official)
    with pytest.raises(ConversionError, match="holds a transformers.*an official"):
        save_official_checkpoint(model, os.path.join(hf, "model.ckpt-best"))
    assert {folder: sorted(os.listdir(folder)) for folder in (official, hf)} == before
    # The same kind again is a rewrite; through the CLI a refusal is a message.
    save_official_checkpoint(model, os.path.join(official, "model.ckpt-best"))
    save_hf_checkpoint(model, hf)
    source = _backbone_file(str(tmp_path / "run"))
    assert convert_main([source, "--to-hf", "--output", official]) == 2
    assert "Give a new or empty folder as the output" in capsys.readouterr().err
    assert sorted(os.listdir(official)) == before[official]
