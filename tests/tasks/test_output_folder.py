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
