"""Task readers on real files and on broken ones: what is kept, skipped and why."""

import json

import pytest
from albert_test_case import task_file as _task

from albert_keras.tasks.task_reader import (
    read_squad_file,
    read_task_file,
    split_words,
)


def _write(tmp_path, lines, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_real_task_files():
    examples, labels, report = read_task_file(
        _task("rt_sentiment", "dev.jsonl"), "classify"
    )
    assert labels == [0, 1] and report.kept == len(examples) == 1275
    assert not report.skipped
    examples, labels, report = read_task_file(_task("vitaminc", "dev.jsonl"), "pair")
    assert labels == ["False", "Neither", "True"] and report.kept == 5513
    with open(_task("vitaminc", "dev.jsonl"), encoding="utf-8") as f:
        first = json.loads(f.readline())
    assert examples[0]["text_b"] == first["text_b"]
    assert examples[0]["label"] == labels.index(first["label"])
    examples, choices, report = read_task_file(
        _task("social_iqa", "train.jsonl"), "choice"
    )
    # Three training records have a different number of options.
    assert choices == 3 and report.skipped == {"not 3 options": 3}
    assert report.kept == 1566 and all(len(e["options"]) == 3 for e in examples)


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
            '{"text": 7, "label": "neg"}',  # 7: not a string
            "",  # blank lines are not records
            '{"sentence": "also fine", "label": "neg"}',  # 9
        ],
    )
    examples, labels, report = read_task_file(
        path, "classify", label_names=["neg", "pos"]
    )
    assert [e["text_a"] for e in examples] == ["fine", "also fine"]
    assert [e["label"] for e in examples] == [1, 0] and labels == ["neg", "pos"]
    assert report.skipped == {
        "malformed JSON": 1,
        "not a JSON object": 1,
        "no label": 1,
        "label outside the label set": 1,
        "empty text": 1,
        "text is not a string": 1,
    }
    assert report.where["malformed JSON"] == [2]
    assert report.where["label outside the label set"] == [5]
    assert "2 kept, 6 skipped" in report.summary()


def test_regression_and_pair_records(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"text_a": "a", "text_b": "b", "label": 3.5}',
            '{"text_a": "a", "label": "high"}',
            '{"text_a": "a", "label": NaN}',
            '{"text_a": "a", "label": true}',
        ],
    )
    examples, labels, report = read_task_file(path, "regress")
    assert labels is None and examples[0]["label"] == 3.5
    assert examples[0]["text_b"] == "b"
    assert report.skipped == {
        "label is not a number": 2,
        "label is not finite": 1,
    }
    pair = _write(
        tmp_path,
        [
            '{"premise": "p", "hypothesis": "h", "label": 1}',
            '{"text": "single", "label": 1}',
        ],
        "pair.jsonl",
    )
    examples, _, report = read_task_file(pair, "pair")
    assert (examples[0]["text_a"], examples[0]["text_b"]) == ("p", "h")
    assert list(report.skipped) == [
        "no text pair (text_a+text_b / premise+hypothesis / sentence1+sentence2 / "
        "question+sentence)"
    ]


def test_unusable_files_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_task_file(str(tmp_path / "missing.jsonl"), "classify")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"text": "caf\xe9", "label": 1}\n'.encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        read_task_file(str(latin), "classify")
    empty = _write(tmp_path, ['{"label": 1}'], "empty.jsonl")
    with pytest.raises(ValueError, match="No usable example.*--task"):
        read_task_file(empty, "classify")
    with pytest.raises(ValueError, match="Allowed: classify, pair"):
        read_task_file(empty, "ner")


def test_choice_records(tmp_path):
    path = _write(
        tmp_path,
        [
            '{"context": "c", "question": "q?", "options": ["a", "b"], "label": 1}',
            '{"context": "c", "options": ["a", "b"], "label": 2}',
            '{"context": "c", "options": ["a", ""], "label": 0}',
            '{"context": "", "options": ["a", "b"], "label": 0}',
        ],
    )
    examples, choices, report = read_task_file(path, "choice")
    assert choices == 2 and examples == [
        {"context": "c q?", "options": ["a", "b"], "label": 1, "line": 1}
    ]
    assert report.skipped == {
        "label is not an option index": 1,
        "an option is empty or not a string": 1,
        "context: empty text": 1,
    }


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
    # For evaluation a misplaced answer still counts (by its text).
    examples, _, _ = read_squad_file(str(path), training=False)
    assert [e["id"] for e in examples] == ["ok", "moved", "none"]
    assert dataset == data["data"]
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not SQuAD JSON"):
        read_squad_file(str(path), training=True)
