"""Bad input to the commands: an error that names the fix, no traceback."""

import pytest

from albert_keras.cli import main

CORPUS = "tests/data/pretrain/en_brown.txt"


def _error(capsys, argv):
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--batch", "--length"])
def test_info_refuses_a_size_below_one(capsys, flag):
    err = _error(capsys, ["info", "--preset", "tiny", flag, "0"])
    assert f"{flag} 0: give a positive number" in err


def test_vocab_refuses_negative_unused_slots(capsys, tmp_path):
    argv = ["vocab", "--kind", "wordpiece", "--input", CORPUS, "--unused", "-3"]
    output = str(tmp_path / "vocab.txt")
    assert "--unused -3" in _error(capsys, [*argv, "--output", output])


def test_vocab_output_under_a_file_is_named(capsys, tmp_path):
    (tmp_path / "a.txt").write_text("x")
    output = str(tmp_path / "a.txt" / "v")
    argv = ["vocab", "--input", CORPUS, "--size", "100", "--output", output]
    err = _error(capsys, argv)
    assert f"Cannot write {output!r}" in err and "writable folder" in err


def test_create_data_output_under_a_file_is_named(capsys, tmp_path):
    (tmp_path / "a.txt").write_text("x")
    output = str(tmp_path / "a.txt" / "shards") + "/"
    argv = ["create-data", "--input", CORPUS, "--output", output, "--quiet"]
    assert f"Cannot write --output {output!r}" in _error(capsys, argv)


def test_create_data_vocab_folder_is_not_called_missing(capsys, tmp_path):
    output = str(tmp_path / "shards") + "/"
    argv = ["create-data", "--input", CORPUS, "--vocab", str(tmp_path)]
    err = _error(capsys, [*argv, "--output", output, "--quiet"])
    assert "is a folder; pass the vocabulary file in it" in err
