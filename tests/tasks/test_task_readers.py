"""The tasks' readers on real files and broken ones: what is kept, skipped, why."""

import json

import pytest
from albert_test_case import task_file as _task

from albert_keras.tasks import (
    ClassificationTask,
    MultipleChoiceTask,
    SquadTask,
    Task,
    task_from_name,
)
from albert_keras.tasks.classification_task import ClassificationConfig
from albert_keras.tasks.squad_reader import read_squad_file, split_words
from albert_keras.tasks.task import config_from_dict


def _write(tmp_path, lines, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _records(name, split):
    with open(_task(name, split), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_real_task_files():
    task = task_from_name("classify")
    data = task.read(_task("rt_sentiment", "dev.jsonl"), training=True)
    records = _records("rt_sentiment", "dev.jsonl")
    assert task.config.labels == [0, 1] and task.config.num_classes == 2
    assert task.config.text_fields == ("text",)  # found in the file
    assert data.report.kept == len(data.examples) == len(records)
    assert not data.report.skipped
    assert [e["label"] for e in data.examples] == [r["label"] for r in records]
    task = task_from_name("pair")
    data = task.read(_task("vitaminc", "dev.jsonl"), training=True)
    records = _records("vitaminc", "dev.jsonl")
    assert task.config.labels == ["False", "Neither", "True"]
    assert task.config.text_fields == ("text_a", "text_b")
    assert data.report.kept == len(records)
    first = data.examples[0]
    assert (first["text_a"], first["text_b"]) == (
        records[0]["text_a"],
        records[0]["text_b"],
    )
    assert first["label"] == task.config.labels.index(records[0]["label"])
    # The dev file, read after training: the training file's label set.
    dev = task.read(_task("vitaminc", "dev.jsonl"))
    assert dev.labels().tolist() == data.labels().tolist()
    task = MultipleChoiceTask()
    data = task.read(_task("social_iqa", "train.jsonl"), training=True)
    records = _records("social_iqa", "train.jsonl")
    odd = [n for n, r in enumerate(records, 1) if len(r["options"]) != 3]
    # One training record has a different number of options.
    assert task.config.num_choices == 3 and len(odd) == 1
    assert data.report.skipped == {"not 3 options": 1}
    assert data.report.where["not 3 options"] == odd
    assert data.report.kept == len(records) - 1
    assert all(len(e["options"]) == 3 for e in data.examples)


def test_bad_records_are_skipped_and_counted(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"text": "fine", "label": "pos"}',
            '{"text": "broken", "label": ',  # 2: malformed
            "[1, 2]",  # 3: not an object
            '{"text": "no label"}',  # 4
            '{"text": "odd", "label": "maybe"}',  # 5: outside the label set
            '{"text": "   ", "label": "neg"}',  # 6: empty
            '{"text": 7, "label": "neg"}',  # 7: a number, not a string
            "",  # blank lines are not records
            '{"text": "also fine", "label": "neg"}',  # 9
            '{"sentence": "another key", "label": "neg"}',  # 10: not the file's key
        ],
    )
    task = task_from_name("classify", labels=["neg", "pos"])
    assert task.config.num_classes == 2
    data = task.read(path, training=True)
    assert [e["text_a"] for e in data.examples] == ["fine", "also fine"]
    assert [e["label"] for e in data.examples] == [1, 0]
    assert [e["line"] for e in data.examples] == [1, 9]
    assert task.config.labels == ["neg", "pos"]
    report = data.report
    assert report.skipped == {
        "malformed JSON": 1,
        "not a JSON object": 1,
        "no label": 1,
        "label outside the label set": 1,
        "empty text": 1,
        "text is a number": 1,
        "no text": 1,
    }
    assert report.where["malformed JSON"] == [2]
    assert report.where["label outside the label set"] == [5]
    assert report.where["no text"] == [10]
    assert "2 kept, 7 skipped" in report.summary()
    # Files to predict on: records without a label, or with one outside the
    # label set, are kept (label None: predicted, not scored).
    blind = task.read(path, require_labels=False)
    assert [e["label"] for e in blind.examples] == [1, None, None, 0]
    assert blind.examples[2]["unscored_label"] == "maybe"
    note = "label outside the label set (predicted, not scored)"
    assert blind.report.noted == {note: 1} and blind.report.where[note] == [5]


def test_regression_and_pair_records(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"text_a": "a", "text_b": "b", "label": 3.5}',
            '{"text_a": "a", "text_b": "b", "label": "high"}',
            '{"text_a": "a", "text_b": "b", "label": NaN}',
            '{"text_a": "a", "text_b": "b", "label": true}',
            '{"text_a": "a", "label": 1}',
        ],
    )
    task = task_from_name("regress")
    data = task.read(path, training=True)
    assert task.regression and task.config.labels is None
    assert data.examples[0]["label"] == 3.5 and data.examples[0]["text_b"] == "b"
    assert data.report.skipped == {
        "label is not a number": 2,
        "label is not finite": 1,
        "no text_b": 1,
    }
    # Regression over single texts: the first record says which.
    single = _write(tmp_path, ['{"text": "a", "label": 2}'], "single.jsonl")
    task = task_from_name("regress")
    assert task.read(single, training=True).examples[0]["text_b"] is None
    assert task.config.text_fields == ("text",)
    pair = _write(
        tmp_path,
        [
            '{"premise": "p", "hypothesis": "h", "label": 1}',
            '{"text": "single", "label": 1}',
            '{"premise": "p2", "hypothesis": "h2", "label": 0}',
        ],
        "pair.jsonl",
    )
    task = task_from_name("pair")
    data = task.read(pair, training=True)
    assert (data.examples[0]["text_a"], data.examples[0]["text_b"]) == ("p", "h")
    assert task.config.text_fields == ("premise", "hypothesis")
    assert data.report.skipped == {"no premise / hypothesis": 1}


def test_text_fields_given_or_found(tmp_path):
    reviews = _write(
        tmp_path,
        [
            '{"review": "Great.", "stars": 5, "label": 1}',
            '{"review": "Awful.", "label": 0}',
        ],
        "reviews.jsonl",
    )
    # No known text key: the error names the flag that says which it is.
    with pytest.raises(ValueError, match="--text-field"):
        task_from_name("classify").read(reviews, training=True)
    with pytest.raises(ValueError, match="--text-field"):
        task_from_name("pair").read(reviews, training=True)
    task = ClassificationTask(num_classes=2, text_fields=("review",))
    data = task.read(reviews, training=True)
    assert [e["text_a"] for e in data.examples] == ["Great.", "Awful."]
    assert [e["text_b"] for e in data.examples] == [None, None]
    # Two given keys make pairs, in that order.
    qa = _write(
        tmp_path,
        ['{"q": "Why?", "a": "Because.", "label": "yes"}', '{"q": "x", "label": "no"}'],
        "qa.jsonl",
    )
    task = ClassificationTask(text_fields=("a", "q"))
    data = task.read(qa, training=True)
    assert (data.examples[0]["text_a"], data.examples[0]["text_b"]) == (
        "Because.",
        "Why?",
    )
    assert data.report.skipped == {"no a": 1}
    # Found: the first record with known keys says them (pairs first, for
    # pair tasks and for regression, which takes either).
    found = _write(
        tmp_path,
        [
            '{"id": 1, "label": 0}',
            '{"sentence1": "s1", "sentence2": "s2", "sentence": "s", "label": 1}',
        ],
        "found.jsonl",
    )
    for name, fields in [
        ("classify", ("sentence",)),
        ("pair", ("sentence1", "sentence2")),
        ("regress", ("sentence1", "sentence2")),
    ]:
        task = task_from_name(name)
        if name != "regress":
            task.config = ClassificationConfig(labels=[0, 1], pairs=task.config.pairs)
        task.read(found, training=True)
        assert task.config.text_fields == fields, name


def test_classification_settings_a_user_may_get_wrong():
    records = [{"review": "Great.", "label": 1}, {"review": "Awful.", "label": 0}]
    # One key as a string: it was read as its letters ("no r / e / v / i / e / w").
    task = ClassificationTask(num_classes=2, text_fields="review")
    assert task.config.text_fields == ("review",)
    data = task.read(records, training=True)
    assert [e["text_a"] for e in data.examples] == ["Great.", "Awful."]
    with pytest.raises(ValueError, match="one text or the two texts of a pair"):
        ClassificationTask(text_fields=("a", "b", "c"))
    # num_classes=0 was accepted until the model was built.
    for bad in (0, -2, 2.0, "2", True):
        with pytest.raises(ValueError, match=f"num_classes={bad!r}"):
            ClassificationTask(num_classes=bad)


def test_python_records():
    """A list of dicts reads as a file does, numbered by position from 1."""
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    data = task.read(
        [
            {"text": "A fine film.", "label": "good"},
            {"text": "", "label": "bad"},
            "not a dict",
            {"text": "Dull.", "label": "bad"},
        ],
        training=True,
    )
    assert task.config.labels == ["bad", "good"]
    assert [(e["text_a"], e["label"], e["line"]) for e in data.examples] == [
        ("A fine film.", 1, 1),
        ("Dull.", 0, 4),
    ]
    assert data.report.path == "<records>"
    assert data.report.skipped == {"empty text": 1, "not a JSON object": 1}
    choice = MultipleChoiceTask()
    data = choice.read(
        [{"context": "It rains.", "options": ["wet", "dry"], "label": 0}],
        training=True,
    )
    assert choice.config.num_choices == 2 and data.examples[0]["line"] == 1
    with pytest.raises(ValueError, match="pass a path"):
        SquadTask().read([{"question": "x"}])


@pytest.mark.parametrize("name", ["data.json", "data"])
def test_a_json_array_file_reads_as_a_list(tmp_path, name):
    """Pretty-printed, read line by line, such a file kept only the lines
    that happened to be whole objects (here the last one), silently."""
    rows = [
        {"text": "A fine film.", "label": "good"},
        {"text": "Dull, with a comma.", "label": "bad"},
    ]
    path = tmp_path / name
    path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    data = task.read(str(path), training=True)
    assert [(e["text_a"], e["label"], e["line"]) for e in data.examples] == [
        ("A fine film.", 1, 1),
        ("Dull, with a comma.", 0, 2),
    ]
    broken = tmp_path / ("broken" + path.suffix)
    broken.write_text(json.dumps(rows, indent=2)[:-3], encoding="utf-8")
    with pytest.raises(ValueError, match="starts as a JSON array but is not valid"):
        task.read(str(broken), training=True)


def test_unusable_files_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        task_from_name("classify").read(str(tmp_path / "missing.jsonl"))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"text": "caf\xe9", "label": 1}\n'.encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        task_from_name("classify").read(str(latin), training=True)
    empty = _write(tmp_path, ['{"text": 3, "label": 1}'], "empty.jsonl")
    task = ClassificationTask(num_classes=1, text_fields=("text",))
    with pytest.raises(ValueError, match="No usable example.*--text-field") as error:
        task.read(empty, training=True)
    # A number where text belongs: said, not only "name the text field".
    assert "text is a number: 1" in str(error.value)
    assert 'Write texts as strings ("123", not 123), or name the text' in str(
        error.value
    )
    with pytest.raises(ValueError, match="Allowed: classify, pair"):
        task_from_name("ner")
    # A classification training file needs two labels or more, and as many
    # as num_classes says.
    one = _write(tmp_path, ['{"text": "a", "label": 1}'] * 2, "one.jsonl")
    with pytest.raises(ValueError, match="1 distinct label.*2 or more"):
        task_from_name("classify").read(one, training=True)
    with pytest.raises(ValueError, match="num_classes=3 but the training file"):
        task_from_name("classify", num_classes=3).read(
            _task("rt_sentiment", "dev.jsonl"), training=True
        )
    with pytest.raises(ValueError, match="num_classes=3 but labels has 2"):
        ClassificationTask(num_classes=3, labels=["a", "b"])


def test_choice_records(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"context": "c", "question": "q?", "options": ["a", "b"], "label": 1}',
            '{"context": "c", "options": ["a", "b"], "label": 2}',
            '{"context": "c", "options": ["a", ""], "label": 0}',
            '{"context": "", "options": ["a", "b"], "label": 0}',
            '{"context": "c", "options": ["a", "b", "c"], "label": 0}',
        ],
    )
    task = MultipleChoiceTask()
    data = task.read(path, training=True)
    assert task.config.num_choices == 2 and data.examples == [
        {"context": "c q?", "options": ["a", "b"], "label": 1, "line": 1}
    ]
    assert data.report.skipped == {
        "label is not an option index": 1,
        "an option is empty or not a string": 1,
        "context: empty text": 1,
        "not 2 options": 1,
    }


@pytest.mark.parametrize("bad", [0, 1, -3, 3.0, "3", True])
def test_a_choice_task_needs_two_options_or_more(bad):
    # num_choices=0 read every record as "not 0 options" and then named the
    # field flags; 1 trained a softmax over one option (loss always 0).
    with pytest.raises(ValueError, match=f"num_choices={bad!r}"):
        MultipleChoiceTask(num_choices=bad)


def test_configs_round_trip_through_json(tmp_path):
    classify = task_from_name("pair", sequence_length=64)
    classify.read(_task("vitaminc", "train.jsonl"), training=True)
    choice = MultipleChoiceTask(num_choices=3, context_field="passage")
    squad = task_from_name("squad", head="simple", sequence_length=48, doc_stride=16)
    for task in (classify, choice, squad):
        text = json.dumps(task.get_config())
        restored = Task.from_config(json.loads(text))
        assert type(restored) is type(task)
        assert restored.config == task.config
        assert restored.get_config() == task.get_config()
    assert classify.get_config()["config"]["labels"] == ["False", "Neither", "True"]
    assert Task.from_config(classify.get_config()).config.text_fields == (
        "text_a",
        "text_b",
    )
    # Unknown classes and fields are refused, saying what is allowed.
    with pytest.raises(ValueError, match="Unknown task class 'NerTask'"):
        Task.from_config({"class": "NerTask", "config": {}})
    with pytest.raises(ValueError, match=r"Unknown SquadConfig field\(s\) \['hed'\]"):
        Task.from_config({"class": "SquadTask", "config": {"hed": "v2"}})
    with pytest.raises(ValueError, match="Allowed: num_classes, labels"):
        config_from_dict(ClassificationConfig, {"num_class": 2})
    # Values are still checked on the way in.
    with pytest.raises(ValueError, match="Unknown head 'v3'"):
        config_from_dict(SquadTask.config_class, {"head": "v3"})


def test_split_words_keeps_character_offsets():
    words, char_to_word = split_words("  The  cat\tsat ")
    assert words == ["The", "cat", "sat"]
    assert char_to_word == [-1, -1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]


def test_squad_reader(tmp_path):
    context = "The quick brown fox jumps."
    data = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {
                                "id": "ok",
                                "question": "What jumps?",
                                "answers": [{"text": "brown fox", "answer_start": 10}],
                            },
                            {
                                "id": "moved",
                                "question": "What?",
                                "answers": [{"text": "fox", "answer_start": 3}],
                            },
                            {
                                "id": "none",
                                "question": "Who?",
                                "answers": [],
                                "is_impossible": True,
                            },
                            {"id": "blank", "question": " ", "answers": []},
                        ],
                    },
                    {
                        "context": "",
                        "qas": [{"id": "empty", "question": "x?", "answers": []}],
                    },
                ]
            }
        ]
    }
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data))
    examples, dataset, report = read_squad_file(str(path), training=True)
    assert [e["id"] for e in examples] == ["ok", "none"]
    assert examples[0]["answer_words"] == (2, 3) and examples[1]["is_impossible"]
    assert report.skipped == {
        "answer not found in the context at answer_start": 1,
        "question: empty text": 1,
        "empty context": 1,
    }
    # For evaluation a misplaced answer still counts (by its text), and an
    # empty question or context is kept marked `skipped` (answered "").
    examples, _, report = read_squad_file(str(path), training=False)
    assert [e["id"] for e in examples] == ["ok", "moved", "none", "blank", "empty"]
    assert examples[3:] == [
        {"id": "blank", "line": 4, "skipped": "question: empty text"},
        {"id": "empty", "line": 5, "skipped": "empty context"},
    ]
    assert report.kept == 3 and report.num_skipped == 2
    assert dataset == data["data"]
    # SquadTask.read is that reader; the JSON `data` list rides along.
    task_data = SquadTask().read(str(path))
    assert [e["id"] for e in task_data.examples][:3] == ["ok", "moved", "none"]
    assert task_data.source == data["data"]
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not SQuAD JSON"):
        read_squad_file(str(path), training=True)


def test_squad_answer_start_given_as_a_string(tmp_path):
    """`"answer_start": "4"` was skipped as "answer without text or
    answer_start"; a digit string now counts, anything else is named."""
    qas = [
        {"id": q, "question": "Who?", "answers": [{"text": "cat", "answer_start": s}]}
        for q, s in (("digits", "4"), ("word", "four"), ("float", 4.5))
    ]
    data = {"data": [{"paragraphs": [{"context": "The cat sat.", "qas": qas}]}]}
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data))
    examples, _, report = read_squad_file(str(path), training=True)
    assert [e["id"] for e in examples] == ["digits"]
    assert examples[0]["answer_words"] == (1, 1)
    assert report.skipped == {
        "answer_start not an integer (a character offset such as 4)": 2
    }
    # Numbered by question, not by line of the JSON file ("lines 2, 3" before).
    assert report.summary().endswith("such as 4): 2, questions 2, 3)")
