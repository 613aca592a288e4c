"""An --init classifier's head is reused only for the same labels.

A fine-tuned `best.keras` given as --init gave its whole head whenever the
shapes fitted: the old run's class 0 (`neg`) started as class 0 of a new
file labelled otherwise, silently.
"""

import json
import shutil

import pytest
from albert_test_case import task_file

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.cli import main
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.init_labels import init_labels, other_labels


def _run_folder(tmp_path, labels):
    run = tmp_path / "earlier"
    run.mkdir()
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    AlbertClassifier(AlbertBackbone(config), num_classes=2).save(run / "best.keras")
    shutil.copy(SPM_MODEL_PATH, run / "vocab.model")
    settings = {"task": {"name": "classify", "labels": labels}, "vocab": "vocab.model"}
    (run / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return run


def test_the_labels_of_the_init_run_are_compared(tmp_path):
    run = _run_folder(tmp_path, ["neg", "pos"])
    for init in (run, run / "best.keras", str(run)):
        assert init_labels(init) == ["neg", "pos"]
    same = ClassificationTask(labels=["neg", "pos"])
    assert other_labels(same, run / "best.keras") is None
    swapped = ClassificationTask(labels=["pos", "neg"])
    assert "are not this run's ['pos', 'neg']" in other_labels(swapped, run)
    digits = ClassificationTask(labels=[0, 1])
    assert other_labels(digits, run) is not None
    assert init_labels(tmp_path) is None  # no settings.json
    (run / "settings.json").write_text("[broken", encoding="utf-8")
    assert init_labels(run) is None


@pytest.mark.parametrize(
    "labels, head", [(["neg", "pos"], "new head"), ([0, 1], "head included")]
)
def test_finetune_reuses_the_head_only_for_the_same_labels(
    tmp_path, capsys, labels, head
):
    run = _run_folder(tmp_path, labels)
    args = ["finetune", "--task", "classify", "--init", str(run / "best.keras")]
    args += ["--train", task_file("rt_sentiment", "train.jsonl")]
    args += ["--dev", task_file("rt_sentiment", "dev.jsonl")]
    args += ["--output-dir", str(tmp_path / "out"), "--epochs", "1"]
    args += ["--max-seq-length", "16", "--max-train-examples", "16"]
    args += ["--max-dev-examples", "16", "--no-export", "--no-jit"]
    assert main(args) == 0
    assert head in capsys.readouterr().out


def test_the_labels_of_a_real_runs_settings_are_read(tmp_path):
    """A run writes `{"task": task.get_config()}`, the labels under
    `task.config` (the tests above write them flat): before, they were not
    found there, so --to-hf wrote LABEL_0, ... and --init reused any head."""
    run = _run_folder(tmp_path, ["x"])
    task = ClassificationTask(labels=["neg", "pos"])
    settings = {"task": task.get_config(), "vocab": "vocab.model"}
    (run / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    assert init_labels(run / "best.keras") == ["neg", "pos"]
    swapped = ClassificationTask(labels=["pos", "neg"])
    assert "are not this run's ['pos', 'neg']" in other_labels(swapped, run)


def test_a_task_folders_head_left_out_is_reported(tmp_path):
    """--init of a keras-hub AlbertTextClassifier preset, or of a transformers
    classifier folder without label names, dropped its head silently."""
    pytest.importorskip("keras_hub")
    from albert_keras.tasks.init_labels import head_left_out
    from checkpoints_convert import save_hf_checkpoint
    from checkpoints_convert.keras_hub_writer import save_keras_hub_preset

    config = AlbertConfig.from_preset("albert_tiny", vocab_size=100)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    hub, hf = str(tmp_path / "hub"), str(tmp_path / "hf")
    save_keras_hub_preset(classifier, hub)
    save_hf_checkpoint(classifier, hf)
    for folder, kind in ((hub, "keras-hub"), (hf, "transformers")):
        told = head_left_out(folder)
        assert told and f"new head: its {kind}" in told, told
        assert f"albert-convert {folder} --model classifier" in told, told
    backbone = str(tmp_path / "backbone")
    save_hf_checkpoint(classifier.backbone, backbone)
    assert head_left_out(backbone) is None
    assert head_left_out("albert_tiny") is None
