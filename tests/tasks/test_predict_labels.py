"""`albert-keras predict` on a file whose labels are not the run's: every text
is predicted, the labels of the run's set are scored, the others named."""

import json

import pytest
from albert_test_case import TINY_FINETUNING, task_file

from albert_keras.cli import main
from albert_keras.tasks import task_from_name
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.tasks.prediction_run import run_prediction

NAMES = ["neg", "pos"]


def _write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def named_run(tmp_path_factory):
    """A one-epoch tiny run on rt_sentiment with the labels neg / pos, and
    the dev rows it can be asked to predict (labels 0 / 1)."""
    folder = tmp_path_factory.mktemp("named_run")
    with open(task_file("rt_sentiment", "dev.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:40]
    named = [dict(r, label=NAMES[r["label"]]) for r in rows]
    run_finetuning(
        task_from_name("classify", sequence_length=32),
        _write(folder / "train.jsonl", named[:32]),
        _write(folder / "dev.jsonl", named[32:]),
        output_dir=str(folder / "run"),
        **dict(TINY_FINETUNING, epochs=1, max_train_examples=32),
    )
    return folder, rows


def test_labels_outside_the_run_set_are_predicted_not_scored(named_run, capsys):
    folder, rows = named_run
    run = str(folder / "run")
    # 10 rows labelled 0/1 (not the run's labels), 6 labelled neg/pos, one
    # without a label.
    mixed = rows[:10] + [dict(r, label=NAMES[r["label"]]) for r in rows[10:16]]
    mixed.append({"text": rows[16]["text"]})
    path = _write(folder / "mixed.jsonl", mixed)
    assert main(["predict", "--model", run, "--input", path]) == 0
    printed = capsys.readouterr().out
    assert "17 predicted, none skipped -> " in printed
    assert (
        "Warning: 10 of 17 records have a label outside the run's label set "
        "['neg', 'pos'] (found: 0, 1): they are predicted but not scored."
    ) in printed
    assert "ClassificationTask metrics (6 scored): accuracy " in printed
    with open(folder / "run" / "predictions-mixed.jsonl") as f:
        lines = [json.loads(line) for line in f]
    assert [p["line"] for p in lines] == list(range(1, 18))
    assert {p["label"] for p in lines} <= set(NAMES)
    # The metrics are those of the 6 rows in the label set alone.
    with open(folder / "run" / "predictions-mixed.metrics.json") as f:
        written = json.load(f)
    assert written["labelled"] == 6 and len(written["warnings"]) == 1
    alone = run_prediction(run, _write(folder / "six.jsonl", mixed[10:16]))
    assert alone["warnings"] == [] and alone["labelled"] == 6
    assert written["metrics"] == pytest.approx(alone["metrics"], abs=1e-6)


def test_a_file_with_none_of_the_run_labels_is_predicted(named_run, capsys):
    folder, rows = named_run
    path = _write(folder / "digits.jsonl", rows[:12])
    assert main(["predict", "--model", str(folder / "run"), "--input", path]) == 0
    printed = capsys.readouterr().out
    assert "12 predicted" in printed
    assert "12 of 12 records have a label outside the run's label set" in printed
    assert "No label of the run's label set in the input: predictions only." in (
        printed
    )


def test_dev_labels_outside_the_set_name_the_set_not_the_fields(tmp_path):
    # Reading a labelled split, such rows are skipped; when that is every row,
    # the error names the label set (not --text-field / --label-field).
    with open(task_file("rt_sentiment", "dev.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:5]
    task = task_from_name("classify", labels=NAMES, text_fields=("text",))
    with pytest.raises(ValueError) as error:
        task.read(_write(tmp_path / "dev.jsonl", rows))
    message = str(error.value)
    assert "Most labels are outside the label set ['neg', 'pos']" in message
    assert "--labels" in message and "--text-field" not in message


def test_texts_cut_to_the_run_length_are_said(named_run, capsys):
    """A text longer than the run's sequence length is cut (as the official
    code does): predict says so on the screen, not only in .metrics.json."""
    folder, _ = named_run
    short, long = "Dull.", "a fine and witty film " * 40
    records = [{"text": short, "label": "neg"}, {"text": long, "label": "pos"}]
    path = _write(folder / "long.jsonl", records)
    assert main(["predict", "--model", str(folder / "run"), "--input", path]) == 0
    printed = capsys.readouterr().out
    # The length is named by the flag a CLI user sets (as finetune names it).
    assert "Note: 1 of 2 records: cut to --max-seq-length 32 (line 2)." in printed


def test_notes_on_squad_questions_number_questions_not_lines():
    """SQuAD records are numbered by question, not by line of the JSON file;
    "first lines 1, 2" was printed where every noted record was shown."""
    from albert_keras.tasks.predict_cli import note_line

    reason = "context split into several windows"
    assert note_line(reason, 2, [1, 2], 3, squad=True) == (
        f"Note: 2 of 3 questions: {reason} (questions 1, 2)."
    )
    assert note_line(reason, 7, [1, 2, 3, 4, 5], 9, squad=True).endswith(
        "(first questions 1, 2, 3, 4, 5)."
    )
    assert note_line("cut to sequence_length=16", 1, [4], 9) == (
        "Note: 1 of 9 records: cut to --max-seq-length 16 (line 4)."
    )


def test_null_threshold_on_a_classifier_is_refused_not_ignored(named_run, capsys):
    folder, rows = named_run
    path = _write(folder / "three.jsonl", rows[:3])
    run = str(folder / "run")
    argv = ["predict", "--model", run, "--input", path, "--null-threshold", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--null-threshold applies to SQuAD runs" in err
    assert "ClassificationTask" in err


def test_a_vocabulary_larger_than_the_model_is_refused(named_run, capsys):
    """Another model's vocabulary: ids past the embedding table were a
    TensorFlow traceback on the CPU (a GPU's gather gives zeros silently)."""
    folder, rows = named_run
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words += [f"w{i}" for i in range(9000)] + ["fine", "dull"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    path = _write(folder / "two.jsonl", [{"text": "fine"}, {"text": "dull"}])
    argv = ["predict", "--model", str(folder / "run"), "--input", path]
    assert main([*argv, "--vocab", str(folder / "vocab.txt")]) == 2
    err = capsys.readouterr().err
    assert f"--vocab {folder / 'vocab.txt'} has 9007 tokens but the model embeds" in err
    assert "not the model's vocabulary" in err


def test_the_predicted_line_counts_in_words():
    """It printed "(1 records skipped: {'not a JSON object': 1})", a Python
    dict and a plural, and "(0 records skipped: none)"."""
    from albert_keras.tasks.predict_cli import predicted_line

    data = {"skipped": {"not a JSON object": 1}}
    assert predicted_line({"examples": 2, "data": data, "predictions": "p.jsonl"}) == (
        "2 predicted, 1 record skipped (not a JSON object: 1) -> p.jsonl"
    )


def test_a_length_beyond_the_positions_names_the_flag_and_the_limit():
    """It said "sequence_length=512 exceeds ...: pass a smaller
    --max-seq-length", the argument's name and no number to pass."""
    from types import SimpleNamespace

    from albert_keras.tasks.prediction_run import _check_length

    config = SimpleNamespace(max_position_embeddings=128)
    model = SimpleNamespace(backbone=SimpleNamespace(config=config))
    task = task_from_name("classify", sequence_length=512)
    with pytest.raises(ValueError) as error:
        _check_length(model, task)
    assert str(error.value) == (
        "--max-seq-length 512 (sequence_length) exceeds the model's "
        "max_position_embeddings=128: pass 128 or less."
    )


def test_a_csv_output_is_the_jsonl_predictions_as_a_table(named_run, tmp_path):
    import csv

    folder, rows = named_run
    path = _write(tmp_path / "some.jsonl", rows[:5])
    run = str(folder / "run")
    for name in ("p.jsonl", "p.csv", "p.tsv"):
        argv = ["predict", "--model", run, "--input", path]
        assert main([*argv, "--output", str(tmp_path / name)]) == 0
    with open(tmp_path / "p.jsonl") as f:
        lines = [json.loads(line) for line in f]
    for name, delimiter in (("p.csv", ","), ("p.tsv", "\t")):
        with open(tmp_path / name, newline="") as f:
            table = list(csv.DictReader(f, delimiter=delimiter))
        assert list(table[0]) == [
            "line",
            "label",
            "probabilities_neg",
            "probabilities_pos",
        ]
        for line, row in zip(lines, table, strict=True):
            assert row["line"] == str(line["line"]) and row["label"] == line["label"]
            for label, p in line["probabilities"].items():
                assert float(row[f"probabilities_{label}"]) == p


def test_tasks_without_one_prediction_a_row_refuse_a_table():
    from albert_keras.tasks import TokenClassificationTask
    from albert_keras.tasks.prediction_run import _check_table_output

    with pytest.raises(ValueError, match=r"writes no table .*\.conll"):
        _check_table_output(TokenClassificationTask(), "tags.csv")
    _check_table_output(task_from_name("classify"), "p.tsv")
