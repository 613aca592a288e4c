"""An --output-dir that cannot be a folder is refused before anything runs."""

import pytest

from albert_keras.cli import main


@pytest.mark.parametrize("below", [False, True])
def test_an_output_folder_that_is_a_file_is_refused(tmp_path, capsys, below):
    # Before: a FileExistsError / NotADirectoryError traceback from RunLock.
    taken = tmp_path / "runs"
    taken.write_text("not a folder")
    out = taken / "nli" if below else taken
    data = tmp_path / "train.jsonl"
    data.write_text('{"text": "a", "label": 0}\n{"text": "b", "label": 1}\n')
    argv = ["finetune", "--task", "classify", "--train", str(data), "--dev"]
    argv += [str(data), "--init", "albert_tiny", "--output-dir", str(out)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f"The output folder {str(out)!r} cannot be made" in error
    assert "is a file" in error and "--output-dir" in error
    assert taken.read_text() == "not a folder"


def test_a_run_refused_before_its_first_file_leaves_no_folder(tmp_path, capsys):
    """A misspelt --train left an empty --output-dir holding `.lock`."""
    out = tmp_path / "runs" / "nli"
    argv = ["finetune", "--task", "classify", "--train", str(tmp_path / "trian.jsonl")]
    argv += ["--dev", str(tmp_path / "dev.jsonl"), "--init", "albert_tiny"]
    assert main([*argv, "--output-dir", str(out)]) == 2
    assert "trian.jsonl" in capsys.readouterr().err
    assert not out.exists()
    out.mkdir(parents=True)  # a folder the user made stays
    assert main([*argv, "--output-dir", str(out)]) == 2
    assert out.is_dir()


def test_a_lock_removes_only_the_folder_it_made(tmp_path):
    from albert_keras.training.run_lock import RunLock

    with RunLock(str(tmp_path / "new")):
        pass
    assert not (tmp_path / "new").exists()
    with RunLock(str(tmp_path / "used")):
        (tmp_path / "used" / "metrics.json").write_text("{}")
    assert sorted(p.name for p in (tmp_path / "used").iterdir()) == [
        ".lock",
        "metrics.json",
    ]
