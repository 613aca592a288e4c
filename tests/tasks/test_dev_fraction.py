"""`--dev-fraction F` / `task.fit(train, dev_fraction=F)`: a dev set held out
of the training examples when there is no dev file.

Held out by class (each in proportion), disjoint from what trains, the same
examples whatever `--seed`, recorded so a rerun resumes; a dev file and a
fraction together, or neither, and SQuAD (whose contexts would be split) are
refused by name before a model loads.
"""

import json

import pytest

from albert_keras.cli import main
from albert_keras.tasks.data_report import DataReport
from albert_keras.tasks.task_data import TaskData

ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(20)]


def _data(labels):
    examples = [{"label": label, "line": i + 1} for i, label in enumerate(labels)]
    return TaskData(examples, DataReport("train.jsonl"))


def test_each_class_is_held_out_in_proportion_and_apart():
    labels = ["a"] * 50 + ["b"] * 30 + ["c"] * 20
    data = _data(labels)
    rest, dev = data.split(0.1)
    assert [e["label"] for e in dev.examples].count("a") == 5
    assert [e["label"] for e in dev.examples].count("b") == 3
    assert [e["label"] for e in dev.examples].count("c") == 2
    lines = [e["line"] for e in rest.examples], [e["line"] for e in dev.examples]
    assert not set(lines[0]) & set(lines[1])
    assert sorted(lines[0] + lines[1]) == list(range(1, 101))
    assert lines[0] == sorted(lines[0]) and lines[1] == sorted(lines[1])
    assert (rest.report.kept, dev.report.kept) == (90, 10)
    assert data.report.kept == 0  # the file's own report is left alone
    again = data.split(0.1)[1]
    assert [e["line"] for e in again.examples] == lines[1]


def test_numbers_are_held_out_at_random_and_too_few_refused():
    rest, dev = _data([i / 7 for i in range(40)]).split(0.25)
    assert (len(rest.examples), len(dev.examples)) == (30, 10)
    with pytest.raises(ValueError, match="holds out 0 for dev: pass a dev file"):
        _data([0, 1, 0]).split(0.1)


def _settings(tmp_path):
    with open(tmp_path / "run" / "run_settings.json") as f:
        return json.load(f)


def _argv(tmp_path, *flags, task="classify"):
    """`albert-keras finetune` on ROWS without --dev (tiny_finetune passes one)."""
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    argv = ["finetune", "--task", task, "--train", str(train), *flags]
    argv += ["--init", "albert_tiny", "--output-dir", str(tmp_path / "run")]
    return argv + ["--epochs", "1", "--max-seq-length", "64", "--no-export", "--no-jit"]


def test_a_run_holds_out_its_dev_set_and_resumes(tmp_path, capsys):
    argv = _argv(tmp_path, "--dev-fraction", "0.2")
    assert main(argv) == 0
    out = capsys.readouterr().out
    train = str(tmp_path / "train.jsonl")
    assert f"train: {train}: 16 kept" in out
    assert f"dev: {train} (held out): 4 kept" in out
    with open(tmp_path / "run" / "metrics.json") as f:
        assert json.load(f)["data"]["dev"]["kept"] == 4
    assert _settings(tmp_path)["dev_fraction"] == 0.2
    assert _settings(tmp_path)["dev"] is None
    assert main(argv) == 0  # the same command: the finished run
    assert "holds this run, finished" in capsys.readouterr().out
    assert main([*argv, "--dev-fraction", "0.3"]) == 2  # other data: refused
    assert "dev_fraction" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, task, message",
    [
        ([], "classify", "neither was given: pass one"),
        (["--dev", "x.jsonl", "--dev-fraction", "0.2"], "pair", "both were given"),
        (["--dev-fraction", "1"], "classify", "`dev_fraction` (--dev-fraction)"),
        (["--dev-fraction", "0.2"], "squad", "SquadTask cannot hold out its dev"),
    ],
)
def test_refused_by_name_before_loading(tmp_path, capsys, flags, task, message):
    assert main(_argv(tmp_path, *flags, task=task)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "best.keras").exists()
