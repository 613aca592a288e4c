"""WordPiece vocabularies in transformers folders: `vocab.txt` with a
`BertTokenizer` config (the layout of the hub's Chinese ALBERT checkpoints),
written by `--to-hf` and found again when the folder is converted back."""

import json
import os

import keras
import numpy as np
import pytest

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertWordPieceTokenizer
from albert_keras.tokenizers.vocabulary import build_wordpiece_vocabulary
from checkpoints_convert import (
    ConversionError,
    load_official_checkpoint,
    save_hf_checkpoint,
)
from checkpoints_convert.backbone_loader import find_vocabulary
from checkpoints_convert.cli import main as convert

TEXT = [
    "Emma Woodhouse, handsome, clever, and rich, with a comfortable home.",
    "The Café in Zürich served naïve résumés; Ångström was not amused!",
    "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。",
    "Mr. Knightley said 三国 was a HAPPY disposition, 2,000 times over.",
]
# Lines the tokenizers are compared on: known words, cased and accented
# forms, unknown words ([UNK]) and characters, Chinese with punctuation.
LINES = [
    "Emma Woodhouse is HANDSOME and clever.",
    "naïve Café, ZÜRICH résumé",
    "天下大势，分久必合。三国演义 xyzzy",
    "Knightley's 2,000 happy-go-lucky homes!",
]


def _vocabulary(folder, lowercase):
    (folder / "text.txt").write_text("\n".join(TEXT * 20) + "\n", encoding="utf-8")
    path = folder / ("vocab.txt" if lowercase else "cased.txt")
    return build_wordpiece_vocabulary(folder / "text.txt", str(path), 260, lowercase)


def _pretrainer(vocab):
    with open(vocab, encoding="utf-8") as f:
        size = len(f.read().split("\n")) - 1
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=size)
    return AlbertPretrainer(AlbertBackbone(config))


def _tokenizer_config(folder):
    with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
        return json.load(f)


def test_to_hf_writes_vocab_txt_and_finds_it_on_the_way_back(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    vocab = _vocabulary(run, lowercase=True)  # as `albert-keras pretrain` keeps it
    model = _pretrainer(vocab)
    model.save(run / "pretrainer.keras")
    hf = tmp_path / "hf"
    assert convert([str(run / "pretrainer.keras"), "--to-hf", "--output", str(hf)]) == 0
    assert sorted(os.listdir(hf)) == [
        "config.json",
        "model.safetensors",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    assert (hf / "vocab.txt").read_bytes() == (run / "vocab.txt").read_bytes()
    config = _tokenizer_config(hf)
    assert config["tokenizer_class"] == "BertTokenizer"
    assert config["do_lower_case"] is True
    assert "BertTokenizer" in capsys.readouterr().err

    # Back to .keras: the WordPiece vocabulary is found and kept beside it.
    back = tmp_path / "back.keras"
    assert convert([str(hf), "--output", str(back)]) == 0
    assert f"wrote {tmp_path / 'back.vocab.txt'}" in capsys.readouterr().err
    assert (tmp_path / "back.vocab.txt").read_bytes() == (
        run / "vocab.txt"
    ).read_bytes()
    loaded = load_official_checkpoint(str(hf), model="pretrainer")
    assert loaded.conversion_report.vocab_path == str(hf / "vocab.txt")
    for ours, theirs in zip(
        keras.saving.load_model(back).weights, model.weights, strict=True
    ):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_to_official_keeps_the_wordpiece_vocabulary_where_a_release_has_it(
    tmp_path, capsys
):
    # A `*_zh` release keeps `vocab_chinese.txt`; the folder `--to-official`
    # writes must give its vocabulary back (converting back, --init).
    run = tmp_path / "run"
    run.mkdir()
    vocab = _vocabulary(run, lowercase=True)
    model = _pretrainer(vocab)
    model.save(run / "zh.keras")
    (run / "zh.vocab.txt").write_bytes((run / "vocab.txt").read_bytes())
    (run / "vocab.txt").unlink()  # only the one beside the model, by its name
    release = tmp_path / "release"
    assert (
        convert([str(run / "zh.keras"), "--to-official", "--output", str(release)]) == 0
    )
    assert f"wrote {release / 'vocab_chinese.txt'}" in capsys.readouterr().err
    assert sorted(os.listdir(release)) == [
        "albert_config.json",
        "model.ckpt-best.data-00000-of-00001",
        "model.ckpt-best.index",
        "vocab_chinese.txt",
    ]
    back = tmp_path / "back.keras"
    assert convert([str(release), "--output", str(back)]) == 0
    assert f"wrote {tmp_path / 'back.vocab.txt'}" in capsys.readouterr().err
    assert (tmp_path / "back.vocab.txt").read_text(encoding="utf-8") == (
        run / "zh.vocab.txt"
    ).read_text(encoding="utf-8")
    assert find_vocabulary(str(release)) == str(release / "vocab_chinese.txt")
    for ours, theirs in zip(
        keras.saving.load_model(back).weights, model.weights, strict=True
    ):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_lowercasing_follows_the_vocabulary_and_the_text_model(tmp_path):
    from albert_keras import AlbertClassifier
    from albert_keras.models import AlbertTextModel

    cased = _vocabulary(tmp_path, lowercase=False)
    backbone = _pretrainer(cased).backbone
    save_hf_checkpoint(backbone, tmp_path / "cased", vocab=cased)
    assert _tokenizer_config(tmp_path / "cased")["do_lower_case"] is False
    # A text model's own tokenizer says how it lowercases.
    lowercase = _vocabulary(tmp_path, lowercase=True)
    tokenizer = AlbertWordPieceTokenizer(lowercase, lowercase=False)
    text = AlbertTextModel(AlbertClassifier(backbone, num_classes=2), tokenizer, 16)
    text.save(tmp_path / "text.keras")
    out = tmp_path / "text_hf"
    assert convert([str(tmp_path / "text.keras"), "--to-hf", "--output", str(out)]) == 0
    assert _tokenizer_config(out)["do_lower_case"] is False
    assert (out / "vocab.txt").read_bytes() == (tmp_path / "vocab.txt").read_bytes()
    # A SentencePiece model still goes to spiece.model, with its own
    # tokenizer files (test_tokenizer_parity.py), no BERT config.
    spm = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=8000))
    save_hf_checkpoint(spm, tmp_path / "spm", vocab=SPM_MODEL_PATH)
    assert sorted(os.listdir(tmp_path / "spm")) == [
        "config.json",
        "model.safetensors",
        "spiece.model",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert _tokenizer_config(tmp_path / "spm")["do_lower_case"] is True
    with open(SPM_MODEL_PATH, "rb") as f:
        assert (tmp_path / "spm" / "spiece.model").read_bytes() == f.read()
    # A vocabulary that is neither is refused before any weight is written.
    (tmp_path / "broken.txt").write_text("[PAD]\n[UNK]\nword\n")
    with pytest.raises(ConversionError, match="lacks the special tokens"):
        save_hf_checkpoint(spm, tmp_path / "refused", vocab=tmp_path / "broken.txt")
    assert not os.path.exists(tmp_path / "refused" / "model.safetensors")


@pytest.mark.parametrize("lowercase", [True, False], ids=["lowercased", "cased"])
def test_transformers_tokenizes_as_ours(lowercase, tmp_path):
    transformers = pytest.importorskip("transformers")
    vocab = _vocabulary(tmp_path, lowercase)
    save_hf_checkpoint(_pretrainer(vocab).backbone, tmp_path / "hf", vocab=vocab)
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert type(theirs).__name__ == "BertTokenizer"
    ours = AlbertWordPieceTokenizer(vocab, lowercase=lowercase)
    expected = ours(LINES).to_list()
    got = [theirs(line, add_special_tokens=False)["input_ids"] for line in LINES]
    assert got == expected
    # Unknown words and "##" continuations were compared too.
    tokens = [ours.vocabulary[i] for ids in expected for i in ids]
    assert "[UNK]" in tokens and any(t.startswith("##") for t in tokens)
