"""`MultiLabelClassificationTask`: any number of labels per text."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import TINY_FINETUNING, max_abs_diff, task_file
from sklearn import metrics as sk

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.cli import main
from albert_keras.models.weight_copy import reuse_task_head
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import MultiLabelClassificationTask, Task
from albert_keras.tasks.data_warnings import data_warnings
from albert_keras.tasks.metrics import multi_label_scores
from albert_keras.tasks.multi_label_records import NO_LABELS, split_labels
from albert_keras.tasks.task import sigmoid
from albert_keras.tokenizers import AlbertTokenizer

TRAIN, DEV = (
    task_file("foldoc_topics", "train.jsonl"),
    task_file("foldoc_topics", "dev.jsonl"),
)
TOKENIZER = AlbertTokenizer(SPM_MODEL_PATH)

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


def _classifier(num_classes, seed=0, multi_label=True):
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    keras.utils.set_random_seed(seed)
    backbone = AlbertBackbone(config)
    return AlbertClassifier(backbone, num_classes=num_classes, multi_label=multi_label)


def test_loss_is_the_mean_binary_cross_entropy():
    """Keras' loss on the task's batches equals numpy's binary cross-entropy
    averaged over every label of every example."""
    task = MultiLabelClassificationTask(label_fields="topics", sequence_length=32)
    train = task.read(TRAIN, training=True).subset(40, 0)
    model = task.build_model(_classifier(10).backbone)
    assert model.multi_label and model.num_classes == len(task.config.labels) == 10
    model.compile(loss=task.losses()[0])
    dataset = task.dataset(train, TOKENIZER, batch_size=40)
    loss = model.evaluate(dataset, verbose=0)
    logits = np.asarray(model.predict(dataset, verbose=0)["logits"], "float64")
    y = train.labels()
    expected = np.mean(
        np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-abs(logits)))
    )
    assert abs(loss - expected) < 1e-5


def test_the_head_starts_at_the_training_label_frequencies():
    """Each bias is its label's training log-odds: from 0, the shared pooled
    output took the prior instead and collapsed to one vector for every text
    (FOLDOC, 3,810 texts: dev micro F1 stuck at the label_frequencies
    baseline, 0.2775; docs/fine-tuning.md)."""
    task = MultiLabelClassificationTask(label_fields="topics")
    train = task.read(TRAIN, training=True)
    counts = np.sum([e["label"] for e in train.examples], axis=0)
    p = np.clip(counts / len(train.examples), 1e-3, 1 - 1e-3)
    model = task.build_model(_classifier(10).backbone)
    assert max_abs_diff(model.classifier.bias, np.log(p / (1 - p))) < 1e-6
    assert (counts > 0).all() and max_abs_diff(sigmoid(model.classifier.bias), p) < 1e-6
    task.read(DEV)  # reading dev changes nothing
    assert (
        max_abs_diff(
            task.build_model(model.backbone).classifier.bias, model.classifier.bias
        )
        == 0
    )


def test_warnings_and_head_reuse():
    task = MultiLabelClassificationTask(labels=["a", "b", "c"])
    train = task.read([{"text": "t", "labels": ["a"]}, {"text": "u", "labels": []}])
    dev = task.read(
        [{"text": "t", "labels": ["a", "b"]}, {"text": "u", "labels": ["b"]}]
    )
    told = data_warnings(task, {"train": train, "dev": dev}, 128)
    assert any(
        t.startswith("No training example has the label(s) 'b', 'c'") for t in told
    )
    assert any(t.startswith("Every dev example has the label(s) 'b'") for t in told)
    # A softmax head never starts a multi-label one, nor the reverse.
    said = reuse_task_head(_classifier(3), _classifier(3, multi_label=False))
    assert (
        said
        == "backbone reused, new head: the loaded head is a single-label (softmax) one"
    )
    assert reuse_task_head(_classifier(3, 1), _classifier(3, 2)).endswith(
        "head included"
    )


def test_cli_finetune_predict_and_savedmodel(tmp_path):
    """`finetune --task multilabel` on FOLDOC topics: the threshold chosen on
    dev reaches savedmodel/ and `predict`, whose scores are those of its own
    lines; the SavedModel gives the model's logits."""
    out = str(tmp_path / "run")
    argv = ["finetune", "--task", "multilabel", "--train", TRAIN, "--dev", DEV]
    argv += ["--label-field", "topics", "--output-dir", out]
    for key in ("init", "epochs", "batch_size", "learning_rate", "patience"):
        argv += ["--" + key.replace("_", "-"), str(TINY_FINETUNING[key])]
    assert main([*argv, "--max-seq-length", "48", "--max-dev-examples", "60"]) == 0
    with open(f"{out}/metrics.json") as f:
        result = json.load(f)
    assert result["monitor"] == "micro_f1"
    threshold = result["best"]["threshold"]
    assert set(result["baselines"]) == {"majority_set", "label_frequencies"}
    with open(f"{out}/savedmodel/assets.extra/multi_label.json") as f:
        assert json.load(f) == {"activation": "sigmoid", "threshold": threshold}
    task = Task.from_config(result["task"])
    assert task.config.label_fields == ("topics",) and len(task.config.labels) == 10
    predict = ["predict", "--model", out, "--input", DEV, "--max-examples", "30"]
    assert main(predict) == 0
    with open(f"{out}/predictions-dev.jsonl") as f:
        lines = [json.loads(line) for line in f]
    with open(f"{out}/predictions-dev.metrics.json") as f:
        scored = json.load(f)["metrics"]
    gold = {i + 1: json.loads(r)["topics"] for i, r in enumerate(open(DEV))}
    names = task.config.labels
    for line in lines:  # the labels are those above the run's threshold
        above = [x for x in names if line["probabilities"][x] > threshold]
        assert line["labels"] == above
    hot = [
        [[x in g for x in names] for g in (gold[x["line"]], x["labels"])] for x in lines
    ]
    expected = multi_label_scores(*np.swapaxes(np.asarray(hot), 0, 1))
    assert scored == pytest.approx(expected)
    # `predict --threshold` applies another one.
    assert (
        main([*predict, "--threshold", "0.3", "--output", f"{tmp_path}/p.jsonl"]) == 0
    )
    with open(f"{tmp_path}/p.jsonl") as f:
        for line in map(json.loads, f):
            assert line["labels"] == [
                x for x in names if line["probabilities"][x] > 0.3
            ]
    served = tf.saved_model.load(f"{out}/savedmodel")
    texts = [json.loads(r)["text"] for r in open(DEV)][:4]
    model = keras.saving.load_model(f"{out}/best.keras")
    assert model.multi_label
    from albert_keras.models import with_tokenizer

    logits = with_tokenizer(model, TOKENIZER, task.config.sequence_length).predict(
        texts, verbose=0
    )["logits"]
    assert max_abs_diff(served.serve(tf.constant(texts))["logits"], logits) < 1e-5
    line = {x["line"]: x for x in lines}[1]
    assert (
        max_abs_diff([line["probabilities"][x] for x in names], sigmoid(logits[0]))
        < 1e-5
    )


def test_per_label_thresholds_are_each_labels_best_by_scikit_learn():
    """Each label's threshold gives its best F1 of `THRESHOLDS` (scikit-learn's
    f1_score); a label never true on dev keeps the shared threshold."""
    from albert_keras.tasks.metrics import best_label_thresholds, best_threshold
    from albert_keras.tasks.multi_label_classification_task import THRESHOLDS

    rng = np.random.default_rng(3)
    for _ in range(20):
        gold = rng.random((40, 6)) < rng.uniform(0.05, 0.5, 6)
        gold[:, 5] = False  # never true
        probabilities = np.clip(gold * 0.3 + rng.random(gold.shape) * 0.7, 0, 1)
        scores, chosen = best_label_thresholds(gold, probabilities, THRESHOLDS)
        for j in range(5):
            best = max(
                sk.f1_score(gold[:, j], probabilities[:, j] > t, zero_division=0)
                for t in THRESHOLDS
            )
            got = sk.f1_score(
                gold[:, j], probabilities[:, j] > chosen[j], zero_division=0
            )
            assert got == pytest.approx(best)
        assert chosen[5] == best_threshold(gold, probabilities, THRESHOLDS)[1]
        decided = probabilities > np.asarray(chosen)
        assert scores["micro_f1"] == pytest.approx(
            sk.f1_score(gold, decided, average="micro", zero_division=0)
        )


def test_per_label_thresholds_reach_the_scores_the_export_and_predictions(tmp_path):
    task = MultiLabelClassificationTask(
        label_fields="topics", sequence_length=32, threshold="per_label"
    )
    train = task.read(TRAIN, training=True).subset(40, 0)
    dev = task.read(DEV).subset(40, 0)
    model = task.build_model(_classifier(10).backbone)
    dataset = task.dataset(dev, TOKENIZER, batch_size=40)
    scores = task.scores(model, dev, dataset)
    chosen = [scores[f"threshold_{i}"] for i in range(10)]
    assert (
        "threshold" not in scores
        and len(chosen) == 10
        and all(0 < t < 1 for t in chosen)
    )
    logits = np.asarray(model.predict(dataset, verbose=0)["logits"])
    decided = sigmoid(logits) > np.asarray(chosen)
    assert scores["micro_f1"] == pytest.approx(
        multi_label_scores(dev.labels() > 0.5, decided)["micro_f1"]
    )
    # The run's metrics.json holds them; predictions, export and the settings.
    task.result = {"best": scores}
    assert task.threshold() == chosen
    line = task.prediction(logits[0])
    names = task.config.labels
    assert line["labels"] == [x for x, d in zip(names, decided[0], strict=True) if d]
    assert set(task.baselines(train, dev)) == {"majority_set", "label_frequencies"}
    task.write_serving_extras(str(tmp_path))
    with open(tmp_path / "assets.extra" / "multi_label.json") as f:
        assert json.load(f)["threshold"] == chosen
    again = Task.from_config(json.loads(json.dumps(task.get_config())))
    assert again.config.threshold == "per_label"
    # In the Keras logs (what metrics.json's best is made of), numbers only.
    from albert_keras.tasks.dev_evaluation import DevEvaluation

    logs = {}
    DevEvaluation(lambda m: scores, verbose=False).on_epoch_end(0, logs)
    assert logs["val_threshold_3"] == chosen[3]


def test_the_threshold_flag(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--task", "multilabel", "--threshold", "half"])
    assert "or per-label (one per label, chosen on dev)" in capsys.readouterr().err
