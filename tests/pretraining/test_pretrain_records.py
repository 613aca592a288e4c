"""`albert-keras pretrain --records`: the records' own lengths, or a clear refusal."""

import gzip
import json
import os

import pytest

from albert_keras.cli import main
from albert_keras.pretraining.record_lengths import record_lengths
from albert_keras.sample_text import CORPUS_PATH, SPM_MODEL_PATH


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Masked records of 96 tokens with 12 predictions, and unmasked ones."""
    folder = tmp_path_factory.mktemp("records")
    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(30_000).rsplit("\n\n", 1)[0]
    corpus = folder / "corpus.txt"
    corpus.write_text(text + "\n", encoding="utf-8")
    made = {}
    for name, extra in (("masked", []), ("unmasked", ["--masked-lm-prob", "0"])):
        out = folder / name
        args = ["create-data", "--input", str(corpus), "--output", f"{out}/"]
        args += ["--max-seq-length", "96", "--max-predictions-per-seq", "12"]
        assert main(args + extra) == 0
        made[name] = str(out / "*.tfrecord")
    return made


def test_record_lengths_are_read_from_the_first_record(records):
    assert record_lengths(records["masked"]) == (96, 12)
    with pytest.raises(ValueError, match="unmasked records"):
        record_lengths(records["unmasked"])
    with pytest.raises(ValueError, match="No pretraining records match"):
        record_lengths(os.path.join(os.path.dirname(records["masked"]), "x*"))


def test_pretrain_takes_the_lengths_of_its_records(records, tmp_path, capsys):
    """The README's recipe: create-data at one length, pretrain --records with
    no length flags (its own default, 128, would not parse 96-token records)."""
    out = str(tmp_path / "run")
    args = ["pretrain", "--records", records["masked"], "--eval-records"]
    args += [records["masked"], "--eval-steps", "1", "--vocab", SPM_MODEL_PATH]
    args += ["--preset", "albert_tiny", "--batch-size", "4", "--steps", "2"]
    args += ["--no-jit"]
    assert main(args + ["--output-dir", out]) == 0, capsys.readouterr().err
    with open(os.path.join(out, "run_settings.json")) as f:
        settings = json.load(f)
    assert (settings["max_seq_length"], settings["max_predictions_per_seq"]) == (96, 12)
    with open(os.path.join(out, "metrics.json")) as f:
        assert json.load(f)["global_step"] == 2
    # A length flag that contradicts the records is refused, naming both.
    code = main(args + ["--output-dir", str(tmp_path / "b"), "--max-seq-length", "128"])
    err = capsys.readouterr().err
    assert code == 2 and "max_seq_length = 96" in err and "--max-seq-length 128" in err
    assert "leave --max-seq-length out" in err


def test_a_folder_or_a_text_file_as_records_is_refused_with_the_fix(records, tmp_path):
    # --records 'r/' ended in a FailedPreconditionError traceback ("Is a
    # directory"), --records corpus.txt in a DataLossError one.
    folder = os.path.dirname(records["masked"])
    with pytest.raises(
        ValueError, match=r"is a folder; pass its records: '.*\*\.tfrecord'"
    ):
        record_lengths(folder + "/")
    text = tmp_path / "corpus.txt"
    text.write_text("One sentence.\nAnother one.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a TFRecord file.*--input"):
        record_lengths(str(text))


def test_a_glob_of_records_that_matches_a_folder_names_it(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.tfrecord").write_bytes(b"")
    with pytest.raises(ValueError, match="matches the folder .*sub'"):
        record_lengths(str(tmp_path / "*"))
