"""Task files as people's tools write them: BOMs, CRLF, repeated columns,
labels typed as floats or booleans, options of varying counts."""

import json

import pytest

from albert_keras.tasks import task_from_name
from albert_keras.tasks.jsonl_records import OPEN_QUOTE
from albert_keras.tasks.squad_reader import read_squad_file


def _bytes(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(
    "name, data",
    [
        ("excel.csv", b"\xef\xbb\xbftext,label\r\nGreat film,pos\r\nDull,neg\r\n"),
        ("excel.tsv", b"\xef\xbb\xbftext\tlabel\r\nGreat film\tpos\r\nDull\tneg\r\n"),
        (
            "bom.jsonl",
            b'\xef\xbb\xbf{"text": "Great film", "label": "pos"}\r\n'
            b'{"text": "Dull", "label": "neg"}\r\n',
        ),
    ],
)
def test_a_byte_order_mark_is_not_part_of_the_first_field(tmp_path, name, data):
    # Before: the CSV header read "\ufefftext" (no text field found), and the
    # JSON line 1 was skipped as malformed JSON.
    task = task_from_name("classify")
    data = task.read(_bytes(tmp_path, name, data), training=True)
    assert data.report.num_skipped == 0
    assert [(e["text_a"], e["label"]) for e in data.examples] == [
        ("Great film", 1),
        ("Dull", 0),
    ]
    assert task.config.labels == ["neg", "pos"]


def test_a_squad_file_with_a_byte_order_mark_reads(tmp_path):
    squad = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": "The cat sat.",
                        "qas": [
                            {
                                "id": "q1",
                                "question": "Who sat?",
                                "answers": [{"text": "cat", "answer_start": 4}],
                            }
                        ],
                    }
                ]
            }
        ]
    }
    data = b"\xef\xbb\xbf" + json.dumps(squad).encode()
    examples, _, report = read_squad_file(_bytes(tmp_path, "bom.json", data), True)
    assert report.kept == 1 and examples[0]["answer_words"] == (1, 1)


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_a_header_naming_a_column_twice_is_refused(tmp_path, delimiter):
    # Before: the second `text` column silently replaced the first.
    rows = ["text,text,label", "Great film,x,1", "Dull,y,0"]
    data = "\n".join(r.replace(",", delimiter) for r in rows).encode()
    name = "dup.csv" if delimiter == "," else "dup.tsv"
    with pytest.raises(ValueError, match=r"'text' in columns 1, 2.*Rename"):
        task_from_name("classify").read(_bytes(tmp_path, name, data), training=True)


def _labelled(labels):
    return [{"text": f"review {i}", "label": v} for i, v in enumerate(labels)]


def test_whole_float_labels_are_their_integer_classes():
    # Before: 1.0 / 0.0 (pandas' integers once a column has a gap) were no
    # label at all: "The training file has 0 distinct label(s) []".
    task = task_from_name("classify")
    data = task.read(_labelled([1.0, 0.0, 1.0, 2.0]), training=True)
    assert task.config.labels == [0, 1, 2]
    assert [e["label"] for e in data.examples] == [1, 0, 1, 2]
    dev = task.read(_labelled([0, 2.0, 1]))
    assert [e["label"] for e in dev.examples] == [0, 2, 1]


def test_boolean_labels_are_two_classes():
    task = task_from_name("classify")
    data = task.read(_labelled([True, False, True]), training=True)
    assert task.config.labels == [False, True]
    assert [e["label"] for e in data.examples] == [1, 0, 1]
    # `--labels true,false` (strings: the CLI cannot say JSON's true) match.
    declared = task_from_name("classify", labels=["true", "false"])
    data = declared.read(_labelled([True, False, True]), training=True)
    assert [e["label"] for e in data.examples] == [0, 1, 0]


def test_fractional_labels_are_named_in_the_refusal():
    with pytest.raises(ValueError, match=r"neither whole numbers nor strings: 0\.5"):
        task_from_name("classify").read(_labelled([0.5, 1.5, 0.25]), training=True)


def test_labels_differing_only_in_case_are_refused():
    # Before: "Positive" and "positive" became two of four classes.
    labels = ["Positive", "negative", "positive", "Negative"] * 5
    with pytest.raises(ValueError, match=r"'Negative' \(5 times.*and 'negative'"):
        task_from_name("classify").read(_labelled(labels), training=True)
    declared = task_from_name("classify", labels=["negative", "positive"])
    data = declared.read(_labelled(labels), training=True)
    assert [e["label"] for e in data.examples[:2]] == [0, 1]
    assert data.report.skipped == {"label outside the label set": 10}


def test_choice_takes_the_most_common_option_count():
    # Before: the first record's count (2) was the task's, and the three
    # 3-option records were skipped as "not 2 options".
    counts = [2, 3, 3, 3, 4]
    records = [
        {"context": f"c{i}", "options": [f"o{j}" for j in range(n)], "label": 1}
        for i, n in enumerate(counts)
    ]
    task = task_from_name("choice")
    data = task.read(records, training=True)
    assert task.config.num_choices == 3
    assert [e["context"] for e in data.examples] == ["c1", "c2", "c3"]
    assert data.report.skipped == {"not 3 options": 2}


def test_choice_labels_written_as_strings_or_floats_are_indices():
    # Before: "1" (JSON string) and 1.0 were "label is not an option index".
    records = [
        {"context": "c", "options": ["a", "b", "c"], "label": label}
        for label in ["1", 2.0, "C", 0, "x", 1.5]
    ]
    data = task_from_name("choice").read(records, training=True)
    assert [e["label"] for e in data.examples] == [1, 2, 2, 0]
    assert data.report.skipped == {"label is not an option index": 2}


def test_regression_targets_written_as_strings_are_numbers():
    # Before: "0.5" (a JSON string) was skipped as "label is not a number".
    task = task_from_name("regress")
    records = _labelled(["0.5", " 1.25 ", 2, "high", "nan"])
    data = task.read(records, training=True)
    assert [e["label"] for e in data.examples] == [0.5, 1.25, 2.0]
    assert data.report.skipped == {"label is not a number": 1, "label is not finite": 1}


def test_a_quoted_field_keeps_its_line_break(tmp_path):
    # Before: the file was split into lines first, so "multi\nline" was
    # read as "multiline".
    path = _bytes(tmp_path, "ml.csv", b'text,label\n"multi\nline text",1\nplain,0\n')
    data = task_from_name("classify").read(path, training=True)
    assert [e["text_a"] for e in data.examples] == ["multi\nline text", "plain"]


def test_json_strings_may_hold_unicode_line_separators(tmp_path):
    # Before: str.splitlines split the JSON lines at U+2028, U+0085 and form
    # feeds (valid unescaped in JSON strings): the records were lost as
    # malformed JSON.
    texts = ["first\u2028second", "a \x85 b", "page\x0cbreak"]
    lines = [
        json.dumps({"text": t, "label": i % 2}, ensure_ascii=False)
        for i, t in enumerate(texts)
    ]
    path = _bytes(tmp_path, "u.jsonl", "\n".join(lines).encode())
    data = task_from_name("classify").read(path, training=True)
    assert [e["text_a"] for e in data.examples] == texts
    assert data.report.num_skipped == 0


@pytest.mark.parametrize("closed", [False, True])
def test_a_stray_quote_counts_every_line_it_swallows(tmp_path, closed):
    # Before: a `"` opening a TSV field read the lines after it into that
    # field: one record skipped (or kept, with the rows as its text) where
    # several were lost.
    rows = ["fine\t1", "poor\t0", '"Bad movie\t0', "good one\t1", "nice\t1"]
    rows += ['a "closing" one\t1', "great\t1"] if closed else ["awful\t0"]
    path = _bytes(tmp_path, "q.tsv", "\n".join(["text\tlabel", *rows]).encode())
    data = task_from_name("classify").read(path, training=True)
    assert data.report.skipped == {OPEN_QUOTE: 4}
    assert data.report.where[OPEN_QUOTE] == [4, 5, 6, 7]
    kept = ["fine", "poor", "great"] if closed else ["fine", "poor"]
    assert [e["text_a"] for e in data.examples] == kept


@pytest.mark.parametrize(
    "labels, message",
    [
        ("0,1,1", r"names 1 more than once"),  # before: 3 classes, one never trained
        ("0", r"has 1 label\(s\): classification needs 2"),  # before: regression
        ("pos", r"has 1 label\(s\)"),
    ],
)
def test_a_declared_label_set_must_name_two_distinct_labels(labels, message):
    from albert_keras.cli import build_parser
    from albert_keras.tasks.finetune_cli import _task

    argv = ["finetune", "--task", "classify", "--train", "t", "--dev", "d"]
    args = build_parser().parse_args([*argv, "--labels", labels])
    with pytest.raises(ValueError, match=message):
        _task(args)


@pytest.mark.parametrize(
    "option, message",
    [
        ({"max_train_examples": 0}, r"--max-train-examples\) must be at least 1"),
        ({"max_dev_examples": -5}, r"--max-dev-examples\) must be at least 1"),
        ({"warmup_fraction": 1.5}, r"from 0 to 1"),
        ({"patience": 0}, r"give 1 or more"),  # before: stopped after epoch 1
        ({"epochs": 0}, r"`epochs` \(--epochs\) must be at least 1"),
    ],
)
def test_training_options_out_of_range_are_refused(option, message):
    # Before: --max-train-examples 0 trained on no example at all, -5 failed
    # in numpy ("negative dimensions are not allowed"), --warmup-fraction 1.5
    # was used as given.
    from albert_keras.tasks.finetuning_options import FinetuningOptions

    with pytest.raises(ValueError, match=message):
        FinetuningOptions(**option)


def _squad_file(tmp_path, qas):
    paragraph = {"context": "The cat sat on the mat.", "qas": qas}
    data = json.dumps({"version": "v2.0", "data": [{"paragraphs": [paragraph]}]})
    return _bytes(tmp_path, "squad.json", data.encode())


def test_squad_questions_without_ids_are_named_and_scored(tmp_path):
    # Before: every such question had the id "": their answers collapsed to
    # one, and the dev evaluation failed with KeyError: 'id'.
    from albert_keras.tasks.squad_evaluation import squad_evaluate

    cat = {"question": "Who sat?", "answers": [{"text": "cat", "answer_start": 4}]}
    mat = {"question": "On what?", "answers": [{"text": "mat", "answer_start": 19}]}
    path = _squad_file(tmp_path, [cat, mat])
    examples, dataset, report = read_squad_file(path, training=False)
    assert [e["id"] for e in examples] == ["question-1", "question-2"]
    assert report.noted == {'no id: named "question-N" (N its number)': 2}
    scores = squad_evaluate(dataset, {"question-1": "cat", "question-2": "sofa"})
    assert (scores["exact"], scores["total"]) == (50.0, 2)


def test_squad_ids_used_twice_are_refused(tmp_path):
    qas = [
        {"id": "a", "question": "Who sat?", "answers": []},
        {"id": "b", "question": "Where?", "answers": []},
        {"id": "a", "question": "On what?", "answers": []},
    ]
    with pytest.raises(ValueError, match=r"questions 1 and 3 have the same id 'a'"):
        read_squad_file(_squad_file(tmp_path, qas), training=False)


def test_classify_on_a_file_of_pairs_warns_that_half_is_unread():
    # Before: --task classify on text_a/text_b records trained on text_a
    # alone, without a word.
    from albert_keras.tasks.data_warnings import data_warnings

    records = [
        {"text_a": "It rains.", "text_b": "It is wet.", "label": i % 2}
        for i in range(4)
    ]
    task = task_from_name("classify")
    data = task.read(records, training=True)
    assert task.config.text_fields == ("text_a",)
    warnings = data_warnings(task, {"train": data, "dev": data}, 128)
    assert warnings[0] == (
        "The training records pair 'text_a' with 'text_b', but this run reads "
        "'text_a' alone: for two texts per example use --task pair "
        "(--text-field text_a --text-pair-field text_b)."
    )
    pair = task_from_name("pair")
    pair_data = pair.read(records, training=True)
    assert not data_warnings(pair, {"train": pair_data, "dev": pair_data}, 128)


def test_pair_on_a_file_of_single_texts_points_to_classify(tmp_path):
    """The mirror case: --task pair on {"text", "label"} records named the
    field flags only, not the task that reads them as they are."""
    path = tmp_path / "single.jsonl"
    path.write_text('{"text": "Great film", "label": 1}\n')
    with pytest.raises(ValueError) as error:
        task_from_name("pair").read(str(path), training=True)
    assert "its records have the fields text, label" in str(error.value)
    assert str(error.value).endswith(
        "Its records hold one text each (text): for single texts use "
        "--task classify (or regress)."
    )


def test_the_cli_says_when_a_run_stopped_early(monkeypatch, capsys):
    # Before: a run stopped by --patience (or resumed after it was) ended
    # with "Best dev epoch 1" and no word of why fewer epochs ran.
    from albert_keras.cli import build_parser
    from albert_keras.tasks import finetuning_run
    from albert_keras.tasks.finetune_cli import run_finetune

    result = {"best_epoch": 1, "best": {"accuracy": 0.75}, "baselines": {}}
    result.update(epochs_run=3, stopped_early=True, monitor="accuracy")
    monkeypatch.setattr(finetuning_run, "run_finetuning", lambda *a, **k: result)
    argv = ["finetune", "--task", "classify", "--train", "t", "--dev", "d"]
    run_finetune(build_parser().parse_args([*argv, "--epochs", "5"]))
    out = capsys.readouterr().out
    assert (
        "Stopped early after epoch 3 of 5: no better dev accuracy in the last 2 "
        "epoch(s) (--patience)." in out
    )


def test_choice_options_written_as_plain_text_say_how_to_write_them(tmp_path):
    # It said "no options list" of a cell holding "up, down".
    data = 'context,options,label\nShe ran.,"[""fast"", ""slow""]",0\n'
    data += 'He sat.,"up, down",1\n'
    path = _bytes(tmp_path, "choice.csv", data.encode())
    data = task_from_name("choice").read(path, training=True)
    assert [e["options"] for e in data.examples] == [["fast", "slow"]]
    assert dict(data.report.skipped) == {
        'options not a list (a CSV/TSV cell holds a JSON list, ["a", "b"], '
        "or --options-field A,B names a column per option)": 1
    }


def test_choice_among_one_option_is_refused():
    # Before: a 1-option task trained and scored accuracy 1.0.
    records = [{"context": f"c{i}", "options": ["only"], "label": 0} for i in range(3)]
    with pytest.raises(ValueError, match=r"Most records have 1 option: .* 2 or more"):
        task_from_name("choice").read(records, training=True)


@pytest.mark.parametrize(
    "task, flags, message",
    [
        ("regress", ["--labels", "0,1"], "--task regress does not read --labels"),
        ("choice", ["--text-field", "q"], "does not read --text-field: name the"),
        ("squad", ["--labels", "a,b"], "--task squad does not read --labels"),
        ("pair", ["--threshold", "0.3"], "does not read --threshold: --threshold sets"),
        (
            "choice",
            ["--threshold", "0.3"],
            "does not read --threshold: --threshold sets",
        ),
    ],
)
def test_flags_the_task_does_not_read_are_refused(task, flags, message):
    # Before: silently ignored (a choice run with --text-field read "context").
    from albert_keras.cli import build_parser
    from albert_keras.tasks.finetune_cli import _task

    argv = ["finetune", "--task", task, "--train", "t", "--dev", "d", *flags]
    with pytest.raises(ValueError, match=message):
        _task(build_parser().parse_args(argv))


def test_dev_labels_the_training_file_lacks_are_warned_of():
    # Before: only the "dev: ... skipped (label outside the label set ...)"
    # line told that the dev scores leave those records out.
    from albert_keras.tasks.data_warnings import data_warnings

    task = task_from_name("classify")
    train = task.read(_labelled(["neg", "pos", "neg", "pos"]), training=True)
    dev = task.read(_labelled(["neg", "neutral", "pos", "neutral"]))
    warnings = data_warnings(task, {"train": train, "dev": dev}, 128)
    assert warnings[0] == (
        "2 of 4 dev records (50%; lines 2, 4) have a label outside the label set "
        "['neg', 'pos']: they are skipped and the dev scores leave them out. To "
        "score them, declare every class with --labels."
    )


def test_a_csv_without_a_header_row_is_named(tmp_path):
    # Before: "its records have the fields great film, 1. Name the text field
    # with --text-field": the first example taken for the header, unsaid.
    path = _bytes(tmp_path, "nohead.csv", b"great film,1\ndull,0\nfine,1\n")
    with pytest.raises(ValueError, match=r"fields great film, 1\..*needs a header row"):
        task_from_name("classify").read(path, training=True)


def test_a_dev_file_that_is_the_training_file_is_warned_of(tmp_path):
    from albert_keras.tasks.data_warnings import data_warnings

    rows = [json.dumps(r) for r in _labelled([0, 1, 0, 1])]
    path = _bytes(tmp_path, "train.jsonl", "\n".join(rows).encode())
    task = task_from_name("classify")
    train = task.read(path, training=True)
    warnings = data_warnings(task, {"train": train, "dev": task.read(path)}, 128)
    assert warnings == [
        f"--dev is the training file ({path}): the dev scores measure how well "
        "the model remembers its training examples, not how it does on new "
        "ones. Hold out a dev file the model does not train on."
    ]
    other = _bytes(tmp_path, "dev.jsonl", "\n".join(rows).encode())
    assert not data_warnings(task, {"train": train, "dev": task.read(other)}, 128)


def test_unnamed_trailing_columns_are_not_duplicates(tmp_path):
    # Excel writes empty trailing columns: "text,label,," names "" twice.
    data = b"text,label,,\r\nGreat film,pos,,\r\nDull,neg,,\r\n"
    task = task_from_name("classify")
    data = task.read(_bytes(tmp_path, "trailing.csv", data), training=True)
    assert [(e["text_a"], e["label"]) for e in data.examples] == [
        ("Great film", 1),
        ("Dull", 0),
    ]


def test_a_squad_window_too_short_for_the_question_names_the_flags():
    # Before: refused after the data was read, by the packer, naming
    # `max_query_length` only (the user had set --max-seq-length 16).
    with pytest.raises(
        ValueError, match=r"of 16 tokens \(--max-seq-length\).*at most 12"
    ):
        task_from_name("squad", sequence_length=16)
    assert task_from_name("squad", sequence_length=16, max_query_length=12)


def test_a_max_answer_length_of_zero_is_refused():
    # Before: trained and decoded no span at all (HasAns F1 0, all "no answer").
    with pytest.raises(ValueError, match=r"\(--max-answer-length\) .* give 1 or more"):
        task_from_name("squad", max_answer_length=0)


def test_choice_records_with_a_question_and_no_context_read_the_question():
    # Before: every record was skipped ("context: text is not a string").
    records = [
        {"question": "Where do fish live?", "options": ["water", "sand"], "label": 0},
        {"context": "", "question": "Q?", "options": ["a", "b"], "label": 1},
    ]
    data = task_from_name("choice").read(records, training=True)
    assert [e["context"] for e in data.examples] == ["Where do fish live?"]
    assert data.report.skipped == {"context: text is not a string": 1}


def test_mixed_label_kinds_name_the_odd_values_and_the_way_out():
    # SNLI writes "-" where annotators disagreed, among 0/1/2. Before: the
    # refusal named neither "-" nor --labels, which skips those rows.
    labels = [0, 1, 2, "-", 1, 0]
    with pytest.raises(ValueError, match=r"the strings: '-'\).*declare the label set"):
        task_from_name("classify").read(_labelled(labels), training=True)
    declared = task_from_name("classify", labels=[0, 1, 2])
    data = declared.read(_labelled(labels), training=True)
    assert data.report.skipped == {"label outside the label set": 1}


def test_declared_integer_labels_match_labels_written_as_strings():
    # Before: --labels 0,1 (read as integers) on JSON labels "0" / "1" found
    # no label in the set: "Most labels are outside the label set [0, 1]".
    from albert_keras.cli import build_parser
    from albert_keras.tasks.finetune_cli import _task

    argv = ["finetune", "--task", "classify", "--train", "t", "--dev", "d"]
    task = _task(build_parser().parse_args([*argv, "--labels", "0,1"]))
    data = task.read(_labelled(["1", "0", "1", "2"]), training=True)
    assert [e["label"] for e in data.examples] == [1, 0, 1]
    assert data.report.skipped == {"label outside the label set": 1}


def test_string_digit_classes_match_integer_dev_labels():
    task = task_from_name("classify")
    task.read(_labelled(["0", "1", "0"]), training=True)
    dev = task.read(_labelled([1, 0, "1"]))
    assert task.config.labels == ["0", "1"]
    assert [e["label"] for e in dev.examples] == [1, 0, 1]


def test_a_blank_json_label_is_no_label():
    # Before: "label": "" became a class named "" (3 classes here).
    task = task_from_name("classify")
    data = task.read(_labelled(["pos", "", "neg", " ", "pos"]), training=True)
    assert task.config.labels == ["neg", "pos"]
    assert data.report.skipped == {"no label": 2}


def test_a_blank_label_in_a_file_to_predict_is_unlabelled():
    task = task_from_name("classify", labels=["neg", "pos"])
    data = task.read(_labelled(["pos", ""]), require_labels=False)
    assert [e["label"] for e in data.examples] == [1, None]
    assert not data.report.noted  # not "outside the label set"


def test_a_dev_set_of_one_example_is_warned_of():
    # Before: a regression run on one dev example printed Pearson 0.0 every
    # epoch and kept epoch 1, without a word.
    from albert_keras.tasks.data_warnings import data_warnings

    task = task_from_name("regress")
    train = task.read(_labelled([1.0, 2.0, 3.0]), training=True)
    dev = task.read(_labelled([5.0]))
    warnings = data_warnings(task, {"train": train, "dev": dev}, 128)
    assert warnings == [
        "The dev set has 1 example: Pearson and Spearman are undefined on one "
        "score (they read 0), so the first epoch is always kept. Use a dev set "
        "of many examples."
    ]


@pytest.mark.parametrize(
    "data, problem",
    [
        ({"paragraphs": []}, "data is a dict, not a list"),
        ([{"paragraphs": ["The cat sat."]}], r"data\[0\]\.paragraphs\[0\] is a str"),
        (
            [{"paragraphs": [{"context": "c", "qas": ["Who?"]}]}],
            r"data\[0\]\.paragraphs\[0\]\.qas\[0\] is a str",
        ),
    ],
)
def test_squad_json_nested_wrongly_is_refused_with_the_place(tmp_path, data, problem):
    # Before: AttributeError ('str' object has no attribute 'get') tracebacks.
    path = _bytes(tmp_path, "bad.json", json.dumps({"data": data}).encode())
    with pytest.raises(ValueError, match=f"is not SQuAD JSON \\({problem}"):
        read_squad_file(path, training=True)


def test_numbered_labels_are_not_typos_of_each_other():
    # Before: a rare `class1` beside a common `class10` (or `level 2` beside
    # `level 3`) was refused as a misspelling.
    labels = ["class10"] * 15 + ["class1"] * 3 + ["level 3"] * 15 + ["level 2"] * 2
    task = task_from_name("classify")
    task.read(_labelled(labels), training=True)
    assert task.config.labels == ["class1", "class10", "level 2", "level 3"]


def test_many_skipped_records_are_warned_of_with_the_likely_cause(tmp_path):
    # Before: unquoted commas in texts skipped most rows; only the summary
    # line at the start said so, as "3 fields where the header has 2".
    from albert_keras.tasks.data_warnings import data_warnings

    rows = ["text,label", "Great film,1", "Dull,0", "Long, slow, dull,0", "Fun, fun,1"]
    path = _bytes(tmp_path, "commas.csv", "\n".join(rows).encode())
    task = task_from_name("classify")
    train = task.read(path, training=True)
    assert train.report.skipped == {
        "4 fields where the header has 2 (a comma in an unquoted text? quote "
        "such fields)": 1,
        "3 fields where the header has 2 (a comma in an unquoted text? quote "
        "such fields)": 1,
    }
    dev = task.read(_labelled([0, 1]))
    warnings = data_warnings(task, {"train": train, "dev": dev}, 128)
    assert warnings[0].startswith(
        "2 of 4 train records (50%) were skipped (4 fields where the header has 2"
    )


def test_a_plain_text_file_is_told_the_formats_read(tmp_path):
    # Before: "no record could be read. Name the text with --text-field ...".
    path = _bytes(tmp_path, "reviews.txt", b"a great film\nboring\n")
    with pytest.raises(ValueError, match=r"read as JSON Lines and no line is JSON"):
        task_from_name("classify").read(path, training=True)


def test_a_squad_file_given_to_classify_points_to_task_squad(tmp_path):
    # Before: "its records have the fields version, data. Name the text with
    # --text-field ..." (the wrong flag).
    path = _squad_file(tmp_path, [{"id": "a", "question": "Who?", "answers": []}])
    with pytest.raises(ValueError, match=r"looks like SQuAD JSON: .* --task squad"):
        task_from_name("classify").read(path, training=True)
    # `predict` with a classifier's run reads it the same way: "train on it"
    # was no advice there.
    with pytest.raises(ValueError, match=r"and predict it with a model fine-tuned so"):
        task_from_name("classify").read(path)


def test_a_windows_1252_file_is_refused_with_its_line(tmp_path):
    # Before: "(byte 19)" alone, to find in a file of thousands of lines.
    data = "text,label\ngood café,1\nbad,0\n".encode("cp1252")
    path = _bytes(tmp_path, "cp.csv", data)
    with pytest.raises(ValueError, match=r"not UTF-8 text \(byte 19, line 2\).*iconv"):
        task_from_name("classify").read(path, training=True)


def test_a_file_cut_inside_a_character_is_called_cut_short(tmp_path):
    # Before: "not UTF-8 text ... iconv -f cp1252", which would garble a UTF-8
    # file that `head -c` cut in the middle of a Chinese character.
    data = '{"text": "好", "label": 1}\n{"text": "天下大势'.encode()[:-1]
    path = _bytes(tmp_path, "cut.jsonl", data)
    with pytest.raises(ValueError, match=r"cut short \(head -c\?\).*head -n"):
        task_from_name("classify").read(path, training=True)


def test_train_labels_left_out_of_declared_labels_are_not_called_errors():
    # Before: `--labels True,False` on a three-class file warned "... skipped
    # (label outside the label set: 2 ...). Fix those records, or name the
    # fields with the --*-field flags.": neither is the cause or the cure.
    from albert_keras.tasks.data_warnings import data_warnings

    task = task_from_name("classify", labels=("a", "b"))
    train = task.read(_labelled(["a", "b", "c", "c", "a", "b"]), training=True)
    dev = task.read(_labelled(["a", "b"]))
    warning = data_warnings(task, {"train": train, "dev": dev}, 128)[0]
    assert warning.startswith("2 of 6 train records (33%) were skipped (label")
    assert "--*-field" not in warning and "list them in --labels" in warning


def test_skipped_squad_questions_are_pointed_to_as_questions():
    """The end-of-run warning said "first lines in metrics.json" for SQuAD,
    whose skipped records are numbered by question."""
    from albert_keras.tasks.data_report import DataReport
    from albert_keras.tasks.data_warnings import _many_skipped

    report = DataReport("train.json", unit="question")
    report.kept += 2
    for number in (3, 4):
        report.skip(number, "answer not in the context")
    (warning,) = _many_skipped("train", report)
    assert "; first questions in metrics.json, data)" in warning
    report.unit = "line"
    assert "; first lines in metrics.json" in _many_skipped("train", report)[0]
