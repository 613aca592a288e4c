"""A fine-tuned classifier keeps its label names in a transformers folder.

`albert-convert runs/x/best.keras --to-hf` wrote `LABEL_0`, `LABEL_1`, ...
although the run's settings.json names each logit; a transformers pipeline
then printed `LABEL_1` where the user's data said `positive`.
"""

import json

import keras
import numpy as np
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


def test_an_hf_folders_labels_reach_predict_and_init(tmp_path, capsys):
    """A transformers classifier's `id2label` names survive `albert-convert`
    to .keras as our runs keep them, a settings.json beside the model:
    before, `predict` reported labels 0 / 1 and `--init` reused the head
    for any labels."""
    from albert_test_case import micro_config

    from albert_keras.models import with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks import ClassificationTask
    from albert_keras.tasks.init_labels import init_labels, other_labels
    from albert_keras.tasks.prediction_run import run_prediction

    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    hf = save_hf_checkpoint(
        classifier, tmp_path / "hf", vocab=SPM_MODEL_PATH, labels=["neg", "pos"]
    )
    assert init_labels(hf) == ["neg", "pos"]  # --init the folder itself
    out = tmp_path / "converted" / "model.keras"
    args = [hf, "--model", "classifier", "--output", str(out)]
    assert convert_main(args) == 0
    assert "labels neg, pos (id2label) in " in capsys.readouterr().err
    assert init_labels(out) == ["neg", "pos"]
    run = _run_folder(tmp_path, ["a", "b"], 2)  # a run's settings stay its own
    assert convert_main([*args[:-1], str(run / "other.keras")]) == 0
    assert "labels neg, pos (id2label) not kept: " in capsys.readouterr().err
    assert init_labels(run / "other.keras") == ["a", "b"]
    assert other_labels(ClassificationTask(labels=["neg", "pos"]), out) is None
    assert other_labels(ClassificationTask(labels=["pos", "neg"]), out) is not None
    texts = tmp_path / "texts.jsonl"
    rows = [{"text": "A fine film.", "label": "pos"}, {"text": "Dull.", "label": "neg"}]
    texts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run_prediction(str(out), str(texts))
    assert result["task"]["config"]["labels"] == ["neg", "pos"]
    assert result["labelled"] == 2 and result["warnings"] == []
    with open(result["predictions"], encoding="utf-8") as f:
        predicted = [json.loads(line) for line in f]
    text_model = with_tokenizer(classifier, SPM_MODEL_PATH, 32)
    odds = keras.ops.softmax(text_model(["A fine film.", "Dull."])["logits"])
    for line, expected in zip(predicted, np.asarray(odds), strict=True):
        assert sorted(line["probabilities"]) == ["neg", "pos"]
        got = [line["probabilities"]["neg"], line["probabilities"]["pos"]]
        assert np.abs(np.array(got) - expected).max() < 1e-5
        assert line["label"] == ["neg", "pos"][int(np.argmax(expected))]


def test_finetune_init_an_hf_folder_reuses_its_head_for_its_labels(tmp_path, capsys):
    """`--init` a transformers classifier whose id2label names the training
    file's labels: its head is reused, as a run's of the same labels (before,
    only its backbone, whatever the labels)."""
    from albert_test_case import micro_config, task_file

    from albert_keras.cli import main
    from albert_keras.sample_text import SPM_MODEL_PATH

    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    hf = save_hf_checkpoint(
        classifier, tmp_path / "hf", vocab=SPM_MODEL_PATH, labels=["neg", "pos"]
    )
    with open(task_file("rt_sentiment", "dev.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:8]
    named = tmp_path / "named.jsonl"
    lines = [json.dumps(dict(r, label=["neg", "pos"][r["label"]])) for r in rows]
    named.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["finetune", "--task", "classify", "--init", hf, "--train", str(named)]
    args += ["--dev", str(named), "--output-dir", str(tmp_path / "out")]
    args += ["--epochs", "1", "--max-seq-length", "16", "--no-export", "--no-jit"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert f"--init {hf}: the whole AlbertClassifier reused, head included" in printed


def test_two_conversions_into_one_folder_keep_each_its_own_labels(tmp_path, capsys):
    """The second conversion into a folder replaced the first one's
    settings.json: models/A.keras then predicted with B's labels."""
    from albert_test_case import micro_config

    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks.init_labels import init_labels

    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    folders = {
        name: save_hf_checkpoint(
            classifier, tmp_path / name, vocab=SPM_MODEL_PATH, labels=labels
        )
        for name, labels in (("hfA", ["neg", "pos"]), ("hfB", ["pos", "neg"]))
    }
    models = tmp_path / "models"
    for name in ("A", "B"):
        args = [folders[f"hf{name}"], "--model", "classifier"]
        assert convert_main([*args, "--output", str(models / f"{name}.keras")]) == 0
    err = capsys.readouterr().err
    assert "holds the labels of A.keras; convert into a folder of its own" in err
    assert init_labels(models / "A.keras") == ["neg", "pos"]
    assert init_labels(models / "B.keras") is None  # not A's
    assert json.loads((models / "settings.json").read_text())["model"] == "A.keras"
    # Converted again, A's own settings are rewritten.
    args = [folders["hfB"], "--model", "classifier", "--output"]
    assert convert_main([*args, str(models / "A.keras")]) == 0
    assert init_labels(models / "A.keras") == ["pos", "neg"]


def test_a_multi_label_hf_folder_converts_and_predicts_as_one(tmp_path, capsys):
    """`problem_type: multi_label_classification` and `id2label` become a
    multi-label run's settings beside the .keras file: `predict` gives each
    label a sigmoid of the logits (0.5: no dev threshold), and `--to-hf`
    writes the same folder back."""
    from albert_test_case import micro_config

    from albert_keras.models import with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks.prediction_run import run_prediction

    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), 3, multi_label=True)
    names = ["net", "hard", "lang"]
    hf = save_hf_checkpoint(classifier, tmp_path / "hf", SPM_MODEL_PATH, labels=names)
    out = tmp_path / "converted" / "model.keras"
    assert convert_main([hf, "--model", "classifier", "--output", str(out)]) == 0
    settings = json.loads((out.parent / "settings.json").read_text(encoding="utf-8"))
    assert settings["task"]["class"] == "MultiLabelClassificationTask"
    assert keras.saving.load_model(out).multi_label
    texts = tmp_path / "texts.jsonl"
    rows = [{"text": "TCP over IP.", "labels": ["net"]}, {"text": "A disk."}]
    texts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run_prediction(str(out), str(texts))
    assert result["labelled"] == 1
    with open(result["predictions"], encoding="utf-8") as f:
        predicted = [json.loads(line) for line in f]
    logits = with_tokenizer(classifier, SPM_MODEL_PATH, 32)([r["text"] for r in rows])
    odds = 1 / (1 + np.exp(-np.asarray(logits["logits"], "float64")))
    for line, expected in zip(predicted, odds, strict=True):
        got = [line["probabilities"][x] for x in names]
        assert np.abs(np.array(got) - expected).max() < 1e-5
        assert line["labels"] == [
            x for x, p in zip(names, expected, strict=True) if p > 0.5
        ]
    assert convert_main([str(out), "--to-hf", "--output", str(tmp_path / "back")]) == 0
    back = _config(tmp_path / "back")
    assert back["problem_type"] == "multi_label_classification"
    assert back["id2label"] == {"0": "net", "1": "hard", "2": "lang"}
