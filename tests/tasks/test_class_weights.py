"""`--class-weight` / `ClassificationTask(class_weight=...)` on imbalanced labels.

The loss is checked against numpy's and torch's weighted cross-entropy, the
"balanced" weights against their formula, and the CLI end to end: the
weights are printed and recorded, a finished run is left alone, and bad
values are refused by name before a model loads.
"""

import json

import keras
import numpy as np
import pytest
from albert_test_case import tiny_classifier_fit, tiny_finetune

from albert_keras.tasks.class_weights import balanced_class_weights
from albert_keras.training import ClassWeightedCrossentropy

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(12, 3)).astype("float32") * 3
LABELS = RNG.integers(0, 3, size=12)
WEIGHTS = [0.5, 2.0, 1.3]
# 3 rows in 4 of class 0: "balanced" gives 24 / (2 * 18) and 24 / (2 * 6).
ROWS = [
    {"text": f"word {i} " * (1 + i % 5), "label": int(i % 4 == 3)} for i in range(24)
]


def _numpy_loss(logits, labels, weights):
    shifted = logits - logits.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    cost = -log_softmax[np.arange(len(labels)), labels]
    return float(np.mean(np.asarray(weights)[labels] * cost))


def test_the_loss_is_the_weighted_mean_of_numpy_and_torch():
    ours = float(ClassWeightedCrossentropy(WEIGHTS)(LABELS, LOGITS))
    assert abs(ours - _numpy_loss(LOGITS, LABELS, WEIGHTS)) < 1e-6
    torch = pytest.importorskip("torch")
    per_row = torch.nn.functional.cross_entropy(
        torch.tensor(LOGITS), torch.tensor(LABELS),
        weight=torch.tensor(WEIGHTS), reduction="none",
    )  # fmt: skip
    assert abs(ours - float(per_row.mean())) < 1e-6
    # Not the weighted mean: torch's reduction="mean" divides by the weights.
    assert abs(ours - _numpy_loss(LOGITS, LABELS, [1.0, 1.0, 1.0])) > 1e-3


def test_weights_of_one_are_plain_cross_entropy_and_round_trip():
    plain = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ones = ClassWeightedCrossentropy([1.0, 1.0, 1.0])
    assert abs(float(ones(LABELS, LOGITS)) - float(plain(LABELS, LOGITS))) < 1e-6
    again = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(ClassWeightedCrossentropy(WEIGHTS))
    )
    assert again.class_weights == WEIGHTS
    with pytest.raises(ValueError, match="one positive weight per class"):
        ClassWeightedCrossentropy([1.0, 0.0])


def test_balanced_weights_follow_n_over_classes_times_count():
    labels = [0] * 18 + [1] * 6 + [2] * 3
    counts = np.bincount(labels)
    expected = len(labels) / (len(counts) * counts)
    got = balanced_class_weights(labels + [None], ["a", "b", "c"])
    assert np.max(np.abs(np.array(got) - expected)) < 1e-12
    # Averaged over the training rows, the weights are 1.
    assert abs(np.mean(np.array(got)[labels]) - 1.0) < 1e-12
    with pytest.raises(ValueError, match="c has no training example"):
        balanced_class_weights([0, 1, 1], ["a", "b", "c"])


def _fit(folder, **config):
    _, result, recorded = tiny_classifier_fit(folder, ROWS, **config)
    return result["epochs"]["loss"][0], recorded


def test_weights_of_one_train_as_without_and_others_do_not(tmp_path):
    plain, recorded = _fit(tmp_path / "plain")
    # Left out of the settings when unset: runs from before the option resume.
    assert "class_weight" not in recorded
    ones, recorded = _fit(tmp_path / "ones", class_weight=[1, 1])
    assert abs(plain - ones) < 1e-6 and recorded["class_weight"] == [1, 1]
    heavy, _ = _fit(tmp_path / "heavy", class_weight=[1, 5])
    assert abs(plain - heavy) > 1e-3


def _cli(tmp_path, *flags, task="classify"):
    return tiny_finetune(tmp_path, ROWS, *flags, task=task)


def test_balanced_through_the_cli(tmp_path, capsys):
    assert _cli(tmp_path, "--class-weight", "balanced") == 0
    printed = capsys.readouterr().out
    assert "Class weights (--class-weight): 0 0.667, 1 2" in printed
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["task"]["config"]["class_weight"] == "balanced"
    with open(tmp_path / "run" / "settings.json") as f:
        weights = json.load(f)["task"]["config"]["class_weight"]
    assert np.max(np.abs(np.array(weights) - [24 / 36, 24 / 12])) < 1e-12
    model = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert model.loss["logits"].class_weights == weights
    # The same command again: the run is finished, not refused as changed.
    assert _cli(tmp_path, "--class-weight", "balanced") == 0
    assert "holds this run, finished" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--class-weight", "1,2,3"], "gives 3 weights for 2 classes"),
        (["--class-weight", "heavy"], "must be 'balanced' or one positive"),
        (["--class-weight", "1,0"], "must be 'balanced' or one positive"),
        (["--class-weight", "1,2", "--task", "regress"], "--task classify or pair"),
        (["--class-weight", "1,2", "--task", "multilabel"], "--task classify or pair"),
    ],
)
def test_bad_weights_are_refused_by_name(tmp_path, capsys, flags, message):
    task = "classify"
    if "--task" in flags:
        task = flags[flags.index("--task") + 1]
        flags = flags[: flags.index("--task")]
    assert _cli(tmp_path, *flags, task=task) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "best.keras").exists()
