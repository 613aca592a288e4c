"""`albert-keras predict` on SQuAD says how many questions it scored.

`predictions-*.metrics.json` wrote `"labelled": 0` beside the metrics of a
gold file's 128 questions: SQuAD examples have answers, not a `label`.
A question with an empty question or context was left out of the
predictions, and so of the scores; now it is answered "" (only if drawn).
"""

import json

import numpy as np
from albert_test_case import task_file

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import task_from_name
from albert_keras.tokenizers import AlbertTokenizer


def _predict(tmp_path, monkeypatch, source):
    """SquadTask.write_predictions on `source` (a SQuAD dict) with fixed
    answers: every question answered "" at null odds 0."""
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(source), encoding="utf-8")
    task = task_from_name("squad", sequence_length=64)
    data = task.read(str(path), require_labels=False)
    ids = [e["id"] for e in data.examples]

    def answers(model, data, dataset):
        return dict.fromkeys(ids, ""), dict.fromkeys(ids, 0.0)

    monkeypatch.setattr(task, "answers", answers)
    written = task.write_predictions(
        None, data, None, str(tmp_path / "predictions.json"), {"null_threshold": 1}
    )
    return written, len(ids)


def test_a_gold_file_counts_every_question_scored(tmp_path, monkeypatch):
    with open(task_file("disfl_qa", "dev.json"), encoding="utf-8") as f:
        source = json.load(f)
    written, questions = _predict(tmp_path, monkeypatch, source)
    assert written["metrics"] is not None
    assert written["labelled"] == questions == 128


def test_questions_without_answers_are_not_counted(tmp_path, monkeypatch):
    with open(task_file("disfl_qa", "dev.json"), encoding="utf-8") as f:
        source = json.load(f)
    for article in source["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa.pop("answers", None)
                qa.pop("is_impossible", None)
    written, questions = _predict(tmp_path, monkeypatch, source)
    assert questions == 128
    assert written["metrics"] is None and written["labelled"] == 0


class _FirstWordModel:
    """Stands for a v2 model: every window's answer is its first context
    token, at no-answer odds -1 (so, below the threshold 0, it is given)."""

    def __init__(self, data):
        self.data = data

    def predict(self, dataset, verbose=0):
        f = self.data.features
        first = f["doc_offset"].reshape(-1, 1).astype("int32")
        zeros = np.zeros(first.shape, "float32")
        return {
            "start_top_index": first,
            "start_top_log_probs": zeros,
            "end_top_index": first,
            "end_top_log_probs": zeros,
            "cls_logits": np.full(len(first), -1.0, "float32"),
        }


def _model_predictions(tmp_path, data):
    """write_predictions of `_FirstWordModel` at the threshold 0: (the
    predictions file, its null odds, what it returned)."""
    task = task_from_name("squad", sequence_length=64)
    dataset = task.dataset(data, AlbertTokenizer(SPM_MODEL_PATH), 8)
    output = str(tmp_path / "predictions.json")
    written = task.write_predictions(
        _FirstWordModel(data), data, dataset, output, {"null_threshold": 0.0}
    )
    # The dev scores of `finetune` (at the threshold 0, and the best one).
    written["dev_scores"] = task.scores(_FirstWordModel(data), data, dataset)
    with open(output, encoding="utf-8") as f, open(written["null_odds"]) as g:
        return json.load(f), json.load(g), written


def _read(tmp_path, source):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(source), encoding="utf-8")
    return task_from_name("squad").read(str(path), require_labels=False)


def _gold(text, start):
    return {"answers": [{"text": text, "answer_start": start}]}


def test_skipped_questions_are_answered_empty_and_scored(tmp_path):
    """An empty question or context was skipped and left out of the
    predictions file; the official evaluation then left it out of EM/F1."""
    source = {
        "version": "v2.0",
        "data": [
            {
                "paragraphs": [
                    {
                        "context": "Emma lived at Hartfield.",
                        "qas": [
                            {"id": "q1", "question": "Who?", **_gold("Emma", 0)},
                            {"id": "q2", "question": "", **_gold("Hartfield", 14)},
                            {"id": "q3", "question": "Why?", "answers": []},
                        ],
                    },
                    {
                        "context": " ",
                        "qas": [
                            {"id": "q4", "question": "Who?", **_gold("Emma", 0)},
                            {"id": "q5", "question": "When?", "answers": []},
                        ],
                    },
                ]
            }
        ],
    }
    data = _read(tmp_path, source)
    predictions, odds, written = _model_predictions(tmp_path, data)
    print(predictions, written["metrics"])
    assert predictions == {"q1": "Emma", "q2": "", "q3": "Emma", "q4": "", "q5": ""}
    # Skipped questions rank above every answered one as unanswerable.
    assert odds["q1"] == odds["q3"] == -1.0
    assert odds["q2"] == odds["q4"] == odds["q5"] > 1e38
    # Counted over all 5: right are q1 ("Emma") and q5 (no answer).
    assert written["labelled"] == 5
    assert written["metrics"]["exact"] == 40.0
    assert written["metrics"]["NoAns_exact"] == 50.0  # q3 wrong, q5 right
    assert written["dev_scores"]["exact"] == written["dev_scores"]["f1"] == 40.0
    assert written["dev_scores"]["best_f1"] == 60.0  # q3 "" too: 3 of 5
    # The reading report still names them.
    assert dict(data.report.skipped) == {"empty context": 2, "question: empty text": 1}
    assert data.report.where["empty context"] == [4, 5]
    assert data.report.where["question: empty text"] == [2]
    assert data.report.kept == 2


def test_a_draw_predicts_exactly_the_drawn_questions(tmp_path):
    """`--max-examples` draws among all questions, skipped ones too, and
    only the drawn ones are answered and scored (an earlier fix answered ""
    for every question of the file that had no prediction)."""
    with open(task_file("disfl_qa", "dev.json"), encoding="utf-8") as f:
        source = json.load(f)
    qas = [
        qa
        for article in source["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]
    blank = {qa["id"] for qa in qas[::4]}  # 32 of 128 questions emptied
    for qa in qas[::4]:
        qa["question"] = ""
    data = _read(tmp_path, source).subset(20, seed=0)
    drawn = [e["id"] for e in data.examples]
    predictions, odds, written = _model_predictions(tmp_path, data)
    print(len(drawn), sorted(blank & set(drawn)), written["labelled"])
    assert len(drawn) == 20 and sorted(predictions) == sorted(drawn)
    assert sorted(odds) == sorted(drawn) and written["labelled"] == 20
    drawn_blank = blank & set(drawn)
    assert 0 < len(drawn_blank) < len(blank)
    assert all(predictions[q] == "" for q in drawn_blank)
    assert all(predictions[q] for q in set(drawn) - blank)


def test_a_draw_of_skipped_questions_only_answers_them_empty(tmp_path):
    """No window to predict: the drawn questions are answered "" all the same."""
    source = {
        "version": "v2.0",
        "data": [
            {
                "paragraphs": [
                    {
                        "context": "Emma lived at Hartfield.",
                        "qas": [{"id": "q1", "question": "Who?", **_gold("Emma", 0)}],
                    },
                    {
                        "context": "",
                        "qas": [
                            {"id": "q2", "question": "Who?", **_gold("Emma", 0)},
                            {"id": "q3", "question": "When?", "answers": []},
                        ],
                    },
                ]
            }
        ],
    }
    data = _read(tmp_path, source).subset(2, seed=0)
    assert [e["id"] for e in data.examples] == ["q2", "q3"]
    predictions, _, written = _model_predictions(tmp_path, data)
    assert predictions == {"q2": "", "q3": ""}
    assert written["labelled"] == 2 and written["metrics"]["exact"] == 50.0
