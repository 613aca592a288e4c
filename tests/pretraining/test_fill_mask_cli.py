"""`albert-keras fill-mask`: run folders, transformers folders, and refusals."""

import json
import shutil

import numpy as np
import pytest

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertConfig,
    AlbertPretrainer,
)
from albert_keras.cli import main
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """What `albert-keras pretrain` leaves: pretrainer.keras and vocab.model."""
    folder = tmp_path_factory.mktemp("run")
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertPretrainer(AlbertBackbone(config))
    rng = np.random.default_rng(1)
    for w in model.weights:
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    model.save(folder / "pretrainer.keras")
    shutil.copy(SPM_MODEL_PATH, folder / "vocab.model")
    return folder, model


def test_texts_and_a_file_in_candidates_out(run_folder, tmp_path, capfd):
    folder, pretrainer = run_folder
    (tmp_path / "texts.jsonl").write_text(
        json.dumps({"sentence": "It was [MASK] of her."}) + "\n\n", encoding="utf-8"
    )
    argv = ["fill-mask", "Emma is a [MASK].", "No mask here.", "--init", str(folder)]
    argv += ["--input", str(tmp_path / "texts.jsonl"), "--text-field", "sentence"]
    argv += ["--top-k", "3", "--output", str(tmp_path / "out.jsonl")]
    assert main(argv) == 0
    printed, err = capfd.readouterr()
    # No TensorFlow error line: on CPUs without AVX-512 oneDNN printed one
    # for the integer transposes of ragged concatenation and take_along_axis.
    assert "oneDNN" not in err, err
    texts = ["Emma is a [MASK].", "No mask here.", "It was [MASK] of her."]
    expected = with_tokenizer(pretrainer, SPM_MODEL_PATH, 128, top_k=3).fill_mask(texts)
    rows = [
        json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()
    ]
    assert rows == [
        {"text": t, "masks": m} for t, m in zip(texts, expected, strict=True)
    ]
    best = expected[0][0][0]
    assert f"-> {best['text']}" in printed and "no [MASK] in this text" in printed
    assert best["text"] == "Emma is a " + best["token"].lstrip("\u2581") + "."


def test_a_transformers_masked_lm_folder(run_folder, tmp_path, capsys):
    """AlbertForMaskedLM has no SOP head: loaded without a warning about it."""
    pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    transformers = pytest.importorskip("transformers")
    from checkpoints_convert.hf_writer import save_hf_checkpoint

    _, pretrainer = run_folder
    save_hf_checkpoint(pretrainer, tmp_path / "pretraining", vocab=SPM_MODEL_PATH)
    model = transformers.AlbertForMaskedLM.from_pretrained(
        str(tmp_path / "pretraining")
    )
    model.save_pretrained(str(tmp_path / "mlm"))
    for name in ("spiece.model", "tokenizer_config.json", "special_tokens_map.json"):
        if (tmp_path / "pretraining" / name).exists():
            shutil.copy(tmp_path / "pretraining" / name, tmp_path / "mlm")
    capsys.readouterr()  # transformers' own load report
    argv = ["fill-mask", "She had [MASK] years", "--init", str(tmp_path / "mlm")]
    assert main([*argv, "--output", str(tmp_path / "out.jsonl")]) == 0
    assert "no sop head" not in capsys.readouterr().err
    got = json.loads((tmp_path / "out.jsonl").read_text())["masks"][0]
    want = with_tokenizer(pretrainer, SPM_MODEL_PATH, 128).fill_mask(
        "She had [MASK] years"
    )
    assert [c["token_id"] for c in got] == [c["token_id"] for c in want[0][0]]
    assert (
        np.abs(
            np.subtract([c["score"] for c in got], [c["score"] for c in want[0][0]])
        ).max()
        < 1e-6
    )


def test_what_fill_mask_refuses(run_folder, tmp_path, capsys, monkeypatch):
    from checkpoints_convert.hf_writer import save_hf_checkpoint

    folder, pretrainer = run_folder
    classifier = AlbertClassifier(pretrainer.backbone, num_classes=2)
    classifier.save(tmp_path / "best.keras")
    save_hf_checkpoint(pretrainer.backbone, tmp_path / "backbone", vocab=SPM_MODEL_PATH)
    (tmp_path / "bad.jsonl").write_text('{"text": 3}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no runs/pretrain here
    cases = [
        (["It [MASK]."], "Run `albert-keras pretrain` first"),
        ([], "no text given"),
        (
            ["x [MASK]", "--init", str(tmp_path / "best.keras")],
            "holds a AlbertClassifier",
        ),
        (["x [MASK]", "--init", str(tmp_path / "backbone")], "without cls/predictions"),
        (["x [MASK]", "--init", "albert_tiny"], "a random model fills masks"),
        (
            ["--init", str(folder), "--input", "bad.jsonl"],
            "line 1 has no text in field 'text'",
        ),
        (
            ["--init", str(folder), "--input", "none.txt"],
            "--input 'none.txt' does not exist",
        ),
    ]
    for argv, message in cases:
        assert main(["fill-mask", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["fill-mask", "x", "--top-k", "0"])
    assert "is not a whole number >= 1" in capsys.readouterr().err
