"""What `albert-keras finetune` tells a newcomer: CSV/TSV and field flags,
the chosen learning rate, warnings where scores would mislead, and errors
that name the fix (a missing --init, a misspelt preset, unnamed fields)."""

import csv
import json

import numpy as np
import pytest
from albert_test_case import task_file

from albert_keras.cli import build_parser, main
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask, MultipleChoiceTask
from albert_keras.tasks.data_warnings import data_warnings
from albert_keras.tasks.finetuning_options import auto_learning_rate
from albert_keras.tokenizers import AlbertTokenizer


def _records(name, split):
    with open(task_file(name, split), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _write_table(path, header, rows, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def test_csv_and_tsv_files_with_field_flags(tmp_path):
    pairs = _records("vitaminc", "dev.jsonl")[:20]
    path = _write_table(
        tmp_path / "nli.csv",
        ["evidence", "claim", "verdict"],
        [[r["text_a"], r["text_b"], r["label"]] for r in pairs] + [["only one"]],
    )
    task = ClassificationTask(
        pairs=True, text_fields=("evidence", "claim"), label_field="verdict"
    )
    data = task.read(path, training=True)
    assert task.config.labels == sorted({r["label"] for r in pairs})
    assert [(e["text_a"], e["text_b"]) for e in data.examples] == [
        (r["text_a"], r["text_b"]) for r in pairs
    ]
    assert [task.config.labels[e["label"]] for e in data.examples] == [
        r["label"] for r in pairs
    ]
    # The short row is reported by its line (the header is line 1).
    assert data.report.skipped == {"1 field where the header has 3": 1}
    assert data.report.where["1 field where the header has 3"] == [22]

    # TSV, integer labels read as numbers, a text holding commas and quotes.
    texts = [r for r in _records("rt_sentiment", "dev.jsonl")[:10]]
    texts[0]["text"] = 'He said "no", then, well, yes.'
    path = _write_table(
        tmp_path / "reviews.tsv",
        ["review", "stars"],
        [[r["text"], r["label"]] for r in texts],
        delimiter="\t",
    )
    task = ClassificationTask(text_fields=("review",), label_field="stars")
    data = task.read(path, training=True)
    assert task.config.labels == [0, 1]
    assert [e["text_a"] for e in data.examples] == [r["text"] for r in texts]
    assert [e["label"] for e in data.examples] == [r["label"] for r in texts]


def test_multiple_choice_csv_with_option_columns_and_letters(tmp_path):
    rows = _records("social_iqa", "dev.jsonl")[:12]
    path = _write_table(
        tmp_path / "choice.csv",
        ["story", "A", "B", "C", "answer"],
        [[r["context"], *r["options"], "ABC"[r["label"]]] for r in rows],
    )
    task = MultipleChoiceTask(
        context_field="story", options_field="A,B,C", label_field="answer"
    )
    data = task.read(path, training=True)
    assert [e["options"] for e in data.examples] == [r["options"] for r in rows]
    assert [e["label"] for e in data.examples] == [r["label"] for r in rows]
    # Options as one JSON list column.
    path = _write_table(
        tmp_path / "choice_list.csv",
        ["context", "options", "label"],
        [[r["context"], json.dumps(r["options"]), r["label"]] for r in rows],
    )
    data = MultipleChoiceTask().read(path, training=True)
    assert [e["options"] for e in data.examples] == [r["options"] for r in rows]


def test_unnamed_fields_are_reported_with_the_fields_found(tmp_path):
    path = tmp_path / "claims.jsonl"
    with open(path, "w") as f:
        for r in _records("vitaminc", "dev.jsonl")[:5]:
            record = {"evidence": r["text_a"], "claim": r["text_b"], "verdict": 1}
            f.write(json.dumps(record) + "\n")
    with pytest.raises(ValueError) as error:
        ClassificationTask(pairs=True).read(str(path), training=True)
    message = str(error.value)
    assert "no label: 5" in message
    assert "the fields evidence, claim, verdict" in message
    assert "--label-field" in message and "--text-pair-field" in message
    with pytest.raises(ValueError, match="the fields evidence, claim, verdict"):
        ClassificationTask(pairs=True, label_field="verdict").read(str(path))
    # A CSV read as JSON would fail on every line; it is read as CSV.
    assert "malformed JSON" not in message


def test_missing_init_and_misspelt_preset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = ["finetune", "--task", "classify"]
    args += ["--train", task_file("rt_sentiment", "dev.jsonl")]
    args += ["--dev", task_file("rt_sentiment", "dev.jsonl")]
    assert main(args) == 2  # the default --init, runs/pretrain, is not there
    error = capsys.readouterr().err
    assert "--init 'runs/pretrain' does not exist" in error
    assert "Run `albert-keras pretrain` first" in error
    assert main([*args, "--init", "albert_bse_v2"]) == 2
    assert "did you mean 'albert_base_v2'?" in capsys.readouterr().err
    assert main([*args, "--init", "models/albert.keras"]) == 2
    error = capsys.readouterr().err
    assert "--init 'models/albert.keras' does not exist" in error
    assert "No vocabulary" not in error
    assert main([*args, "--init", "albert_tiny", "--text-pair-field", "b"]) == 2
    assert "--text-pair-field needs --text-field" in capsys.readouterr().err
    # A released size by name is its weights (as from_preset), never random:
    # not in the cache, it is refused with the commands that put it there.
    monkeypatch.setenv("ALBERT_KERAS_HOME", str(tmp_path / "cache"))
    assert main([*args, "--init", "base"]) == 2
    error = capsys.readouterr().err
    assert "No local weights for preset 'base'" in error
    assert "albert_base_v2.tar.gz" in error and "albert-convert" in error
    assert "Random weights: --init albert_small" in error


def test_warnings_where_scores_would_mislead():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    rows = _records("rt_sentiment", "dev.jsonl")[:40]
    task = ClassificationTask(text_fields=("text",), sequence_length=16)
    train = task.read(rows, training=True)
    dev = task.read([dict(r, label=1) for r in rows])
    for data in (train, dev):
        task.dataset(data, tokenizer, 8)  # counts what packing cuts
    found = data_warnings(task, {"train": train, "dev": dev}, 16)
    lengths = [int(tokenizer(r["text"]).shape[0]) for r in rows]
    cut = sum(n > 14 for n in lengths)
    assert cut > 20  # the test's premise: most reviews exceed 16 tokens
    assert found[0].startswith(f"{cut} of 40 train examples ({cut / 40:.0%})")
    assert "Raise --max-seq-length" in found[0]
    assert (
        "Every dev example has the label 1: dev accuracy measures nothing (always "
        "answering 1 scores 1.0). Use a dev set with every class."
    ) in found

    # Multiple choice whose right answer is always the third option.
    rows = _records("social_iqa", "dev.jsonl")[:30]
    third = [dict(r, label=2) for r in rows]
    task = MultipleChoiceTask()
    train = task.read(third, training=True)
    found = data_warnings(task, {"train": train, "dev": task.read(rows)}, 128)
    # The figure named is the majority_class baseline the run prints: the
    # training set's one answer scored on dev (12 of the 30 dev answers are
    # the third), not the 1.0 it scores on the training set.
    dev_share = task.baselines(train, task.read(rows))
    assert dev_share["majority_class"]["accuracy"] == pytest.approx(12 / 30)
    assert found == [
        "Every training example has the label option 3: the model learns to "
        "answer it whatever the input. Always answering option 3 scores "
        "accuracy 1.0 on the training set and 0.4000 on dev (the majority_class "
        "baseline). Use a training set with every class."
    ]
    # A dominant class, and a constant regression score.
    labels = np.r_[np.zeros(19, int), 1]
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    dev = task.read([{"text": "x", "label": int(v)} for v in labels], training=True)
    assert data_warnings(task, {"train": dev, "dev": dev}, 128)[0].startswith(
        "95% of the dev examples have the label 0: accuracy is high"
    )
    task = ClassificationTask(num_classes=1, text_fields=("text",))
    dev = task.read([{"text": "x", "label": 2.5}] * 3)
    assert data_warnings(task, {"train": dev, "dev": dev}, 128) == [
        "Every dev example has the score 2.5: Pearson and Spearman are undefined. "
        "Use a set whose scores vary."
    ]


def test_auto_learning_rate_csv_and_warnings_through_the_cli(tmp_path, capsys):
    rows = _records("rt_sentiment", "train.jsonl")[:24]
    header = ["review", "sentiment"]
    train = _write_table(
        tmp_path / "train.csv", header, [[r["text"], r["label"]] for r in rows]
    )
    dev = _write_table(tmp_path / "dev.csv", header, [[r["text"], 1] for r in rows])
    out = tmp_path / "run"
    args = ["finetune", "--task", "classify", "--train", train, "--dev", dev]
    args += ["--text-field", "review", "--label-field", "sentiment"]
    args += ["--init", "albert_tiny", "--output-dir", str(out), "--epochs", "1"]
    assert main([*args, "--no-export", "--no-jit"]) == 0
    printed = capsys.readouterr().out
    hidden = 64  # albert_tiny
    rate = auto_learning_rate(hidden)
    assert f"Learning rate {rate:g} (auto, for hidden size {hidden};" in printed
    with open(out / "metrics.json") as f:
        metrics = json.load(f)
    assert metrics["options"]["learning_rate"] == rate
    assert metrics["data"]["train"]["kept"] == 24
    assert metrics["warnings"][0].startswith("Every dev example has the label 1")
    assert printed.count("Warning: Every dev example has the label 1") == 2


def test_auto_learning_rates_by_size():
    assert auto_learning_rate(256) == 2e-4  # the small models trained here
    assert auto_learning_rate(512) == 1e-4
    assert auto_learning_rate(768) == auto_learning_rate(1024) == 3e-5
    assert auto_learning_rate(2048) == auto_learning_rate(4096) == 1e-5


def test_every_finetune_and_predict_flag_is_explained():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name in ("finetune", "predict"):
        sub = commands[name]
        for action in sub._actions:
            if action.help == "==SUPPRESS==" or action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings} has no help"
        text = sub.format_help()
        assert "(default: runs/pretrain)" in text or name == "predict"
    text = commands["finetune"].format_help()
    for default in (
        "(default: 3)",
        "(default: 32)",
        "(default: auto)",
        "(default: 128)",
    ):
        assert default in text
