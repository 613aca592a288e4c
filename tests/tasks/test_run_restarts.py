"""Starting `albert-keras finetune` again: after a refusal, after it finished."""

import os

from albert_test_case import task_file

from albert_keras.cli import main


def _args(out, dev):
    args = ["finetune", "--task", "classify", "--init", "albert_tiny"]
    args += ["--train", task_file("rt_sentiment", "train.jsonl"), "--dev", dev]
    args += ["--output-dir", str(out), "--epochs", "1", "--max-seq-length", "32"]
    args += ["--max-train-examples", "32", "--max-dev-examples", "32", "--no-export"]
    return args + ["--no-jit"]


def test_a_refused_run_does_not_block_the_corrected_command(tmp_path, capsys):
    out = tmp_path / "run"
    # A typo in the dev path: refused up front, naming the file.
    assert main(_args(out, str(tmp_path / "dve.jsonl"))) == 2
    assert "dve.jsonl" in capsys.readouterr().err
    assert not os.path.exists(out / "run_settings.json")
    # The corrected command trains (it was refused as "other settings").
    good = _args(out, task_file("rt_sentiment", "dev.jsonl"))
    assert main(good) == 0
    assert "holds a run started with other settings" not in capsys.readouterr().err
    # Finished: the same command does nothing; other flags are refused, not
    # answered with the old run's metrics.
    assert main(good) == 0
    assert "holds this run, finished" in capsys.readouterr().out
    assert main(good + ["--epochs", "2"]) == 2
    error = capsys.readouterr().err
    assert "epochs: 1 then, 2 now" in error and "--overwrite" in error
    # Other data: named as other contents, not as two bare hashes.
    other = tmp_path / "dev.jsonl"
    other.write_text(
        open(task_file("rt_sentiment", "dev.jsonl")).read()[:2000].rsplit("\n", 1)[0]
    )
    assert main(_args(out, str(other))) == 2
    assert "dev: other contents (SHA-256 " in capsys.readouterr().err


def test_overwrite_clears_every_file_of_the_old_run(tmp_path):
    """A squad run overwritten by another kept its dev answers, and a run with
    another vocabulary kept the old one's copy beside the new."""
    import json

    from albert_keras.tasks.finished_run import RUN_FILES, clear_run

    for name in RUN_FILES:
        (tmp_path / name).write_text("old")
    (tmp_path / "logs").unlink()
    (tmp_path / "logs").mkdir()
    (tmp_path / "settings.json").write_text(json.dumps({"vocab": "old-8k.model"}))
    (tmp_path / "old-8k.model").write_text("old")
    (tmp_path / "notes.txt").write_text("the user's")
    clear_run(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
    assert {"dev_predictions.json", "dev_null_odds.json"} <= set(RUN_FILES)
    (tmp_path / "settings.json").write_text("[not a run's")  # broken: removed too
    clear_run(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
