"""`--label-smoothing` / `ClassificationTask(label_smoothing=...)`.

transformers' Trainer smooths classification targets with
`label_smoothing_factor`; here the loss is checked against torch's
`cross_entropy(weight=, label_smoothing=)` with and without class weights,
a run trains differently with it and records it (only when set, so older
runs resume), and bad values are refused by name before a model loads.
"""

import json

import keras
import numpy as np
import pytest
from albert_test_case import (
    max_abs_diff,
    micro_config,
    tiny_classifier_fit,
    tiny_finetune,
)

from albert_keras import AlbertBackbone
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.training import ClassWeightedCrossentropy

RNG = np.random.default_rng(1)
LOGITS = RNG.normal(size=(12, 3)).astype("float32") * 3
LABELS = RNG.integers(0, 3, size=12)
ONLY_FOR = "for --task classify, pair, choice or tag"
ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]


def _numpy_loss(logits, labels, weights, smoothing):
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    w = np.asarray(weights)
    gold = -w[labels] * log_p[np.arange(len(labels)), labels]
    spread = -(log_p * w).sum(-1) / logits.shape[-1]
    return float(np.mean((1 - smoothing) * gold + smoothing * spread))


@pytest.mark.parametrize("weights", [None, [0.5, 2.0, 1.3]])
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_the_loss_is_numpys_and_torchs(weights, smoothing):
    ours = float(ClassWeightedCrossentropy(weights, smoothing)(LABELS, LOGITS))
    expected = _numpy_loss(LOGITS, LABELS, weights or [1.0] * 3, smoothing)
    assert abs(ours - expected) < 1e-6
    torch = pytest.importorskip("torch")
    per_row = torch.nn.functional.cross_entropy(
        torch.tensor(LOGITS), torch.tensor(LABELS),
        weight=None if weights is None else torch.tensor(weights),
        label_smoothing=smoothing, reduction="none",
    )  # fmt: skip
    assert abs(ours - float(per_row.mean())) < 1e-6
    if smoothing:  # not the unsmoothed loss
        unsmoothed = _numpy_loss(LOGITS, LABELS, weights or [1.0] * 3, 0.0)
        assert abs(ours - unsmoothed) > 1e-3


def test_no_smoothing_is_plain_cross_entropy_and_round_trips():
    plain = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ours = ClassWeightedCrossentropy()
    assert abs(float(ours(LABELS, LOGITS)) - float(plain(LABELS, LOGITS))) < 1e-6
    again = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(ClassWeightedCrossentropy(None, 0.2))
    )
    assert again.label_smoothing == 0.2 and again.class_weights is None
    with pytest.raises(ValueError, match=r"`label_smoothing` must be in \[0, 1\)"):
        ClassWeightedCrossentropy(label_smoothing=1.0)


def _fit(folder, **config):
    task, result, recorded = tiny_classifier_fit(folder, ROWS, **config)
    return task.model, result["epochs"]["loss"][0], recorded


def test_a_run_trains_with_it_and_records_it(tmp_path):
    plain, _, recorded = _fit(tmp_path / "plain")
    assert "label_smoothing" not in recorded  # older runs still resume
    zero, _, _ = _fit(tmp_path / "zero", label_smoothing=0.0)
    smoothed, _, recorded = _fit(tmp_path / "smoothed", label_smoothing=0.2)
    assert recorded["label_smoothing"] == 0.2
    assert smoothed.loss["logits"].label_smoothing == 0.2

    def moved(a, b):
        return max(map(max_abs_diff, a.get_weights(), b.get_weights()))

    # Near ln 2 the gradient of target (1 - e) y + e / K is (1 - e) times
    # the plain one, a scale AdamW undoes: the steps differ a little.
    assert moved(plain, zero) == 0.0
    assert moved(plain, smoothed) > 1e-6
    saved = keras.saving.load_model(tmp_path / "smoothed" / "best.keras")
    assert saved.loss["logits"].label_smoothing == 0.2


def _cli(tmp_path, *flags, task="classify"):
    return tiny_finetune(tmp_path, ROWS, *flags, task=task)


def test_through_the_cli(tmp_path):
    assert _cli(tmp_path, "--label-smoothing", "0.1") == 0
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["task"]["config"]["label_smoothing"] == 0.1


@pytest.mark.parametrize(
    "flags, task, message",
    [
        (
            ["--label-smoothing", "1.5"],
            "classify",
            "`label_smoothing` (--label-smoothing)",
        ),
        (
            ["--label-smoothing", "-0.1"],
            "pair",
            "`label_smoothing` (--label-smoothing)",
        ),
        (
            ["--label-smoothing", "0.1"],
            "regress",
            ONLY_FOR,
        ),
        (["--label-smoothing", "0.1"], "multilabel", ONLY_FOR),
    ],
)
def test_bad_values_are_refused_by_name(tmp_path, capsys, flags, task, message):
    assert _cli(tmp_path, *flags, task=task) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "best.keras").exists()


def test_multiple_choice_smooths_over_its_options(tmp_path):
    from albert_keras.tasks import MultipleChoiceTask

    rows = [
        {"context": f"word {i}", "options": ["yes", "no", "maybe"], "label": i % 3}
        for i in range(9)
    ]
    task = MultipleChoiceTask(num_choices=3, sequence_length=16, label_smoothing=0.1)
    keras.utils.set_random_seed(0)
    task.fit(
        AlbertBackbone(micro_config(8000)), rows, rows[:3], str(tmp_path / "run"),
        vocab=SPM_MODEL_PATH, epochs=1, batch_size=3, export=False,
        jit_compile=False,
    )  # fmt: skip
    assert task.model.loss["logits"].label_smoothing == 0.1
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["task"]["config"]["label_smoothing"] == 0.1
    with pytest.raises(ValueError, match="--label-smoothing"):
        MultipleChoiceTask(label_smoothing=1.0)


def test_tagging_smooths_each_tagged_word_as_torch():
    """[batch, length] labels and sample weights (the tagged words): the mean
    over the tagged words of the smoothed cost, torch's `cross_entropy` with
    `ignore_index` and `label_smoothing`."""
    from albert_keras.tasks import TokenClassificationTask

    task = TokenClassificationTask(labels=["O", "B-X", "I-X"], label_smoothing=0.2)
    loss = task.losses()[0]["logits"]
    logits = RNG.normal(size=(3, 5, 3)).astype("float32") * 3
    labels = RNG.integers(0, 3, size=(3, 5))
    weights = (RNG.random((3, 5)) > 0.4).astype("float32")
    ours = float(loss(labels, logits, sample_weight=weights))
    tagged = weights.reshape(-1) > 0
    expected = _numpy_loss(
        logits.reshape(-1, 3)[tagged], labels.reshape(-1)[tagged], [1.0] * 3, 0.2
    )
    assert abs(ours - expected) < 1e-6
    torch = pytest.importorskip("torch")
    ignored = np.where(weights > 0, labels, -100).reshape(-1)
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(logits.reshape(-1, 3)), torch.tensor(ignored),
        ignore_index=-100, label_smoothing=0.2,
    )  # fmt: skip
    assert abs(ours - float(theirs)) < 1e-6
    plain = TokenClassificationTask(labels=["O", "B-X"]).losses()[0]["logits"]
    assert isinstance(plain, keras.losses.SparseCategoricalCrossentropy)


def test_a_tagging_run_records_it(tmp_path):
    rows = [
        {"words": ["Ann", "ran", str(i)], "tags": ["B-PER", "O", "O"]} for i in range(8)
    ]
    assert tiny_finetune(tmp_path, rows, "--label-smoothing", "0.1", task="tag") == 0
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["task"]["config"]["label_smoothing"] == 0.1
    saved = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert saved.loss["logits"].label_smoothing == 0.1
