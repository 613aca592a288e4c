"""`MultiLabelClassificationTask`: any number of labels per text."""

import json

import numpy as np
import pytest
from sklearn import metrics as sk

from albert_keras.tasks import MultiLabelClassificationTask, Task
from albert_keras.tasks.metrics import multi_label_scores
from albert_keras.tasks.multi_label_classification_task import NO_LABELS, split_labels

TEXTS = ["Rain stops play.", "Markets fall.", "A quiet day.", "Goals and taxes."]
SETS = [["sport", "weather"], ["money"], [], ["money", "sport"]]
HOT = [[0, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]]  # money, sport, weather


def test_scores_equal_scikit_learn_on_random_label_sets():
    rng = np.random.default_rng(0)
    for trial in range(300):
        # 2+ columns: scikit-learn reads one column as a binary task.
        n, k = rng.integers(1, 12), rng.integers(2, 7)
        gold = rng.random((n, k)) < rng.random()
        predicted = rng.random((n, k)) < rng.random()
        ours = multi_label_scores(gold, predicted)
        present = np.flatnonzero((gold | predicted).any(axis=0))
        expected = {
            "micro_f1": sk.f1_score(gold, predicted, average="micro", zero_division=0),
            "macro_f1": sk.f1_score(
                gold, predicted, average="macro", labels=present, zero_division=0
            )
            if present.size
            else 0.0,
            "exact_match": sk.accuracy_score(gold, predicted),
            "label_accuracy": 1 - sk.hamming_loss(gold, predicted),
        }
        for name, value in expected.items():
            assert ours[name] == pytest.approx(value, abs=1e-12), (trial, name)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_layout_reads_to_the_same_examples(tmp_path):
    jsonl = "".join(
        json.dumps({"text": t, "labels": s}) + "\n"
        for t, s in zip(TEXTS, SETS, strict=True)
    )
    cells = ["sport|weather", "money", "[]", '"[""money"", ""sport""]"']
    csv = "text,topics\n" + "".join(
        f'"{t}",{c}\n' for t, c in zip(TEXTS, cells, strict=True)
    )
    wide = "text,money,sport,weather\n" + "".join(
        f'"{t}",{",".join(map(str, h))}\n' for t, h in zip(TEXTS, HOT, strict=True)
    )
    ids = "".join(  # a transformers dataset's ids of declared names
        json.dumps(
            {
                "sentence": t,
                "label": [["money", "sport", "weather"].index(x) for x in s],
            }
        )
        + "\n"
        for t, s in zip(TEXTS, SETS, strict=True)
    )
    layouts = [
        (_write(tmp_path / "a.jsonl", jsonl), {}),
        (_write(tmp_path / "b.csv", csv), {"label_fields": "topics"}),
        (_write(tmp_path / "c.csv", wide), {"label_fields": "money,sport,weather"}),
        (_write(tmp_path / "d.jsonl", ids), {"labels": ["money", "sport", "weather"]}),
    ]
    for path, fields in layouts:
        task = MultiLabelClassificationTask(**fields)
        data = task.read(path, training=True)
        assert task.config.labels == ["money", "sport", "weather"], path
        assert [e["label"] for e in data.examples] == HOT, path
        assert [e["text_a"] for e in data.examples] == TEXTS, path
        again = Task.from_config(json.loads(json.dumps(task.get_config())))
        assert again.config == task.config


def test_bad_records_are_skipped_with_their_reasons(tmp_path):
    task = MultiLabelClassificationTask()
    task.read([{"text": "a", "labels": ["x", "y"]}], training=True)
    dev = task.read(
        [
            {"text": "b", "labels": ["x"]},
            {"text": "c"},
            {"text": "d", "labels": ["x", "z"]},
            {"text": "e", "labels": [1.5]},
            {"text": "", "labels": ["y"]},
        ]
    )
    assert [e["line"] for e in dev.examples] == [1]
    assert dict(dev.report.skipped) == {
        NO_LABELS: 1,
        "label outside the label set": 1,
        "a label is not a name or an integer": 1,
        "empty text": 1,
    }
    wide = MultiLabelClassificationTask(label_fields=("x", "y"))
    data = wide.read([{"text": "a", "x": 1, "y": 0}, {"text": "b", "x": 2, "y": 0}])
    assert dict(data.report.skipped) == {"x is 2, not 0 or 1": 1}
    # Predicting: records without labels, or with new ones, are kept unscored.
    kept = task.read(
        [{"text": "c"}, {"text": "d", "labels": ["z"]}], require_labels=False
    )
    assert [e["label"] for e in kept.examples] == [None, None]
    assert task.scored(kept) == []


def test_labels_that_look_like_mistakes_are_refused():
    task = MultiLabelClassificationTask()
    records = (
        [{"text": "t", "labels": ["sports"]}] * 6
        + [{"text": "t", "labels": ["sprots", "news"]}]
        + [{"text": "t", "labels": ["news"]}] * 6
    )
    with pytest.raises(ValueError, match="'sprots'.*looks like a typo of 'sports'"):
        task.read(records, training=True)
    with pytest.raises(ValueError, match="1 distinct label.*--task classify"):
        MultiLabelClassificationTask().read(
            [{"text": "t", "labels": ["a"]}], training=True
        )
    with pytest.raises(ValueError, match="between 0 and 1"):
        MultiLabelClassificationTask(threshold=1.0)
    with pytest.raises(ValueError, match="0/1 columns are their names"):
        MultiLabelClassificationTask(label_fields=("a", "b"), labels=["b", "a"])


def test_split_labels():
    assert split_labels(" a ; b ") == ["a", "b"]
    assert split_labels("1|3") == [1, 3]
    assert split_labels("[") == "labels are not a JSON list"
    assert split_labels("") is None and split_labels([]) == []


def test_predictions_baselines_and_metrics_by_hand():
    task = MultiLabelClassificationTask(labels=["a", "b", "c"], threshold=0.6)
    line = task.prediction([0.5, -2.0, 3.0])  # sigmoid 0.62, 0.12, 0.95
    assert line["labels"] == ["a", "c"]
    assert line["probabilities"]["b"] == pytest.approx(1 / (1 + np.exp(2)), abs=1e-6)
    train = task.read(
        [{"text": "t", "labels": ["a"]}] * 3 + [{"text": "t", "labels": ["b", "c"]}]
    )
    dev = task.read([{"text": "t", "labels": ["a", "b"]}, {"text": "t", "labels": []}])
    baselines = task.baselines(train, dev)
    # The commonest set {a}, twice: one hit, a false positive and a miss.
    assert baselines["majority_set"]["micro_f1"] == pytest.approx(2 / (2 + 2))
    # Frequencies a 0.75, b 0.25, c 0.25: above 0.6, {a} again.
    assert baselines["label_frequencies"] == baselines["majority_set"]
    tuned = MultiLabelClassificationTask(labels=["a", "b", "c"])
    # Chosen on dev: above 0.05 to 0.20 every label (2 hits, 4 false
    # positives: F1 0.5); above 0.25 to 0.70, {a} (F1 0.5); the tie goes to
    # the threshold nearest 0.5, whose answer is {a}.
    chosen = tuned.baselines(train, dev)["label_frequencies"]
    assert chosen["micro_f1"] == pytest.approx(0.5)
    logits = np.array([[1.0, 1.0, -1.0], [-1.0, -1.0, 2.0]])
    assert task.metrics(dev.labels(), logits)["exact_match"] == 0.5
