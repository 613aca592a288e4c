"""`albert-keras predict` on SQuAD says how many questions it scored.

`predictions-*.metrics.json` wrote `"labelled": 0` beside the metrics of a
gold file's 128 questions: SQuAD examples have answers, not a `label`.
"""

import json

from albert_test_case import task_file

from albert_keras.tasks import task_from_name


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
