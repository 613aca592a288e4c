"""Bad input to the commands: an error that names the fix, no traceback."""

import pytest

from albert_keras.cli import main
from checkpoints_convert.cli import main as convert_main

CORPUS = "tests/data/pretrain/en_brown.txt"
TASK = "tests/data/tasks/rt_sentiment/dev.jsonl"


def _error(capsys, argv):
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--batch", "--length"])
def test_info_refuses_a_size_below_one(capsys, flag):
    err = _error(capsys, ["info", "--preset", "tiny", flag, "0"])
    assert f"{flag} 0: give a positive number" in err


def test_info_takes_the_preset_as_its_argument(capsys):
    """`albert-keras info o_zh` was argparse's "unrecognized arguments"."""
    assert "Unknown preset. Received: 'o_zh'" in _error(capsys, ["info", "o_zh"])
    err = _error(capsys, ["info", "tiny", "--preset", "small"])
    assert "Both 'tiny' and --preset small name the model: give one" in err
    assert main(["info", "tiny", "--batch", "1", "--length", "4"]) == 0
    assert capsys.readouterr().out.startswith("ALBERT tiny: L=2 H=64 E=32")


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
    assert f"Cannot write {output!r}" in _error(capsys, argv)


def test_create_data_vocab_folder_is_not_called_missing(capsys, tmp_path):
    output = str(tmp_path / "shards") + "/"
    argv = ["create-data", "--input", CORPUS, "--vocab", str(tmp_path)]
    err = _error(capsys, [*argv, "--output", output, "--quiet"])
    assert "is a folder; pass the vocabulary file in it" in err


@pytest.mark.parametrize("flag", ["--max-seq-length", "--batch-size", "--max-examples"])
def test_predict_refuses_a_number_below_one(tmp_path, flag):
    from albert_keras.tasks.prediction_run import run_prediction

    keywords = {flag[2:].replace("-", "_"): 0}
    keywords["sequence_length"] = keywords.pop("max_seq_length", None)
    with pytest.raises(ValueError, match=f"{flag} 0: give a positive number"):
        run_prediction(str(tmp_path), TASK, **keywords)


@pytest.mark.parametrize("output", ["", "a.txt/p.jsonl"])
def test_predict_output_folder_problems_are_named(tmp_path, output):
    from albert_keras.tasks.prediction_run import run_prediction

    (tmp_path / "a.txt").write_text("x")
    output = str(tmp_path / output)
    with pytest.raises(ValueError, match="--output"):
        run_prediction(str(tmp_path), TASK, output=output)


def test_predict_output_of_a_new_folder_is_named(tmp_path):
    """`--output out/` (a folder not made yet) is refused before the model
    loads, not a NotADirectoryError traceback after predicting."""
    from albert_keras.tasks.prediction_run import run_prediction

    output = str(tmp_path / "out") + "/"
    with pytest.raises(ValueError, match="--output .* names a folder"):
        run_prediction(str(tmp_path), TASK, output=output)


@pytest.mark.parametrize("output", ["test.csv", "./test.csv", "test.metrics.json"])
def test_predict_output_that_is_the_input_is_refused(
    capsys, tmp_path, monkeypatch, output
):
    """`--output` naming the input (or its .metrics.json naming it) would
    replace the data with the predictions: refused, the file left as it was."""
    monkeypatch.chdir(tmp_path)
    data = "text,label\ngood,1\n"
    name = "test.metrics.json" if output.endswith(".json") else "test.csv"
    (tmp_path / name).write_text(data)
    given = "test.jsonl" if output.endswith(".json") else output
    argv = ["predict", "--model", str(tmp_path), "--input", name, "--output", given]
    err = _error(capsys, argv)
    assert f"--output {given!r} would overwrite the --input file {name!r}" in err
    assert (tmp_path / name).read_text() == data


def test_predict_model_that_is_not_a_zip_is_named(tmp_path):
    from albert_keras.tasks.prediction_run import run_prediction

    (tmp_path / "fake.keras").write_text("not a zip")
    with pytest.raises(ValueError, match="is not a .keras file"):
        run_prediction(str(tmp_path / "fake.keras"), TASK)


def test_task_file_that_is_a_folder_is_named(tmp_path):
    from albert_keras.tasks.jsonl_records import open_lines

    with pytest.raises(ValueError, match="is a folder; pass a file in it"):
        open_lines(str(tmp_path))


def test_export_model_that_is_not_a_zip_is_named(capsys, tmp_path):
    (tmp_path / "fake.keras").write_text("not a zip")
    argv = ["export", "--model", str(tmp_path / "fake.keras"), "--no-check"]
    assert "is not a .keras file" in _error(capsys, argv)


@pytest.mark.parametrize(
    "flag, message",
    [("--num-classes", "num_classes=0"), ("--text-model", "--text-model 0:")],
)
def test_convert_refuses_zero_instead_of_ignoring_it(capsys, tmp_path, flag, message):
    from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    from albert_keras.sample_text import SPM_MODEL_PATH
    from checkpoints_convert.cli import main as convert

    config = AlbertConfig.from_preset("tiny")
    source = str(tmp_path / "classifier.keras")
    AlbertClassifier(AlbertBackbone(config), num_classes=2).save(source)
    argv = [source, "--model", "classifier", flag, "0", "--vocab", SPM_MODEL_PATH]
    assert convert([*argv, "--output", str(tmp_path / "out.keras")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("target", [[], ["--to-official"], ["--to-hf"]])
def test_convert_output_under_a_file_is_named(capsys, tmp_path, target):
    from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    from checkpoints_convert.cli import main as convert

    source = str(tmp_path / "pretrainer.keras")
    AlbertPretrainer(AlbertBackbone(AlbertConfig.from_preset("tiny"))).save(source)
    (tmp_path / "a.txt").write_text("x")
    output = str(tmp_path / "a.txt" / ("out.keras" if not target else "out"))
    assert convert([source, *target, "--output", output]) == 2
    err = capsys.readouterr().err
    assert f"Cannot write '{output}" in err and "writable folder" in err


@pytest.mark.parametrize("target", [[], ["--to-hf"]])
def test_convert_keras_source_that_is_not_a_zip_is_named(capsys, tmp_path, target):
    from checkpoints_convert.cli import main as convert

    (tmp_path / "fake.keras").write_text("not a zip")
    argv = [str(tmp_path / "fake.keras"), *target]
    assert convert([*argv, "--output", str(tmp_path / "out.keras")]) == 2
    assert "as a .keras model: it is not a zip archive" in capsys.readouterr().err


def test_an_empty_task_file_is_called_empty_not_misnamed(tmp_path):
    from albert_keras.tasks import ClassificationTask

    (tmp_path / "empty.jsonl").write_text("\n\n")
    task = ClassificationTask(labels=[0, 1], text_fields=("text",))
    with pytest.raises(ValueError, match="it holds no record.$"):
        task.read(str(tmp_path / "empty.jsonl"), require_labels=False)


def test_info_config_that_is_binary_names_the_file(capsys, tmp_path):
    (tmp_path / "model.keras").write_bytes(b"PK\x03\x04\xc9\xff binary")
    err = _error(capsys, ["info", "--config", str(tmp_path / "model.keras")])
    assert "model.keras' is not a JSON text file" in err


def test_create_data_refuses_a_json_lines_task_file(capsys, tmp_path):
    output = str(tmp_path / "shards") + "/"
    argv = ["create-data", "--input", TASK, "--output", output, "--quiet"]
    assert "is JSON Lines (its first line is a JSON object" in _error(capsys, argv)


@pytest.mark.parametrize("command", [main, convert_main])
def test_both_commands_print_their_version(capsys, command):
    from albert_keras import __version__

    with pytest.raises(SystemExit) as exit:
        command(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.split()[-1] == __version__
