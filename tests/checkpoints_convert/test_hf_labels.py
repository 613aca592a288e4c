"""A fine-tuned classifier keeps its label names in a transformers folder.

`albert-convert runs/x/best.keras --to-hf` wrote `LABEL_0`, `LABEL_1`, ...
although the run's settings.json names each logit; a transformers pipeline
then printed `LABEL_1` where the user's data said `positive`.
"""

import json

import pytest

from albert_keras import AlbertBackbone, AlbertClassifier
from checkpoints_convert import ConversionError, save_hf_checkpoint
from checkpoints_convert.cli import main as convert_main

TINY = "albert_tiny"


def _run_folder(tmp_path, labels, num_classes):
    run = tmp_path / "run"
    run.mkdir()
    AlbertClassifier(AlbertBackbone(TINY), num_classes=num_classes).save(
        run / "best.keras"
    )
    task = {"name": "classify", "labels": labels, "text_fields": ["text"]}
    (run / "settings.json").write_text(json.dumps({"task": task}), encoding="utf-8")
    return run


def _config(folder):
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def test_the_runs_labels_become_id2label(tmp_path, capsys):
    run = _run_folder(tmp_path, ["negative", "neutral", "positive"], 3)
    out = tmp_path / "hf"
    assert convert_main([str(run / "best.keras"), "--to-hf", "--output", str(out)]) == 0
    assert "labels (id2label) from " in capsys.readouterr().err
    config = _config(out)
    assert config["id2label"] == {"0": "negative", "1": "neutral", "2": "positive"}
    assert config["label2id"] == {"negative": 0, "neutral": 1, "positive": 2}
    transformers = pytest.importorskip("transformers")
    theirs = transformers.AutoConfig.from_pretrained(str(out))
    assert theirs.id2label == {0: "negative", 1: "neutral", 2: "positive"}


def test_without_a_run_or_with_other_labels_the_defaults_stay(tmp_path):
    run = _run_folder(tmp_path, [0, 1, 2], 2)  # settings of another model
    out = tmp_path / "hf"
    assert convert_main([str(run / "best.keras"), "--to-hf", "--output", str(out)]) == 0
    assert _config(out)["id2label"] == {"0": "LABEL_0", "1": "LABEL_1"}
    (run / "settings.json").unlink()
    assert convert_main([str(run / "best.keras"), "--to-hf", "--output", str(out)]) == 0
    assert _config(out)["label2id"] == {"LABEL_0": 0, "LABEL_1": 1}


def test_bad_labels_are_refused_in_python(tmp_path):
    classifier = AlbertClassifier(AlbertBackbone(TINY), num_classes=2)
    for labels in (["a"], ["a", "a"], ["a", "b", "c"]):
        with pytest.raises(ConversionError, match="one distinct label per logit"):
            save_hf_checkpoint(classifier, tmp_path / "x", labels=labels)
    with pytest.raises(ConversionError, match="AlbertBackbone has none"):
        save_hf_checkpoint(AlbertBackbone(TINY), tmp_path / "y", labels=["a"])
    folder = save_hf_checkpoint(classifier, tmp_path / "z", labels=[0, 1])
    assert _config(tmp_path / "z")["id2label"] == {"0": "0", "1": "1"}
    assert folder == str(tmp_path / "z")
