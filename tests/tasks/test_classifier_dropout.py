"""`--classifier-dropout` / `task.fit(classifier_dropout=...)`: the dropout
before the task head (transformers' `classifier_dropout_prob`).

The head's official rate is 0.1; at 0 a training step's forward pass must be
the inference one exactly, at any other rate it must differ, and the saved
model must say the rate. The SQuAD heads have no dropout: refused by name.
"""

import json

import keras
import numpy as np
import pytest
from albert_test_case import micro_config, tiny_finetune

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertSpanQA,
    AlbertTokenClassifier,
)
from albert_keras.models.weight_copy import set_head_dropout
from albert_keras.tasks.finetuning_options import FinetuningOptions

ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]
IDS = np.arange(1, 25, dtype="int32").reshape(2, 12) % 50 + 5

HEADS = {
    "classifier": lambda b: AlbertClassifier(b, num_classes=3),
    "choice": lambda b: AlbertMultipleChoice(b, num_choices=2),
    "tagger": lambda b: AlbertTokenClassifier(b, num_classes=3),
}


def _inputs(kind):
    ids = np.stack([IDS, IDS[::-1]], 1) if kind == "choice" else IDS
    return {
        "token_ids": ids,
        "segment_ids": np.zeros_like(ids),
        "padding_mask": np.ones_like(ids),
    }


def _train_vs_infer(model, inputs):
    trained = model(inputs, training=True)["logits"]
    inferred = model(inputs, training=False)["logits"]
    return float(np.max(np.abs(np.asarray(trained) - np.asarray(inferred))))


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_the_rate_is_the_one_the_head_trains_with(kind, tmp_path):
    keras.utils.set_random_seed(0)
    model = HEADS[kind](AlbertBackbone(micro_config()))  # no encoder dropout
    inputs = _inputs(kind)
    assert _train_vs_infer(model, inputs) > 1e-4  # the official 0.1
    assert set_head_dropout(model, 0.0) == 0.1
    assert _train_vs_infer(model, inputs) == 0.0
    assert set_head_dropout(model, 0.5) == 0.0
    assert _train_vs_infer(model, inputs) > 1e-4
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert loaded.get_config()["dropout"] == 0.5
    assert loaded.output_dropout.rate == 0.5


def test_heads_without_dropout_are_refused_by_name():
    backbone = AlbertBackbone(micro_config())
    with pytest.raises(ValueError, match="AlbertSpanQA has no dropout before"):
        set_head_dropout(AlbertSpanQA(backbone), 0.2)
    plain = AlbertClassifier(backbone, num_classes=2, dropout=0.0)
    with pytest.raises(ValueError, match="build it with dropout=0.2"):
        set_head_dropout(plain, 0.2)


@pytest.mark.parametrize("bad", [1.0, -0.1, True, "0.1"])
def test_bad_rates_are_refused_with_the_flag(bad):
    with pytest.raises(ValueError, match="--classifier-dropout"):
        FinetuningOptions(classifier_dropout=bad)


def test_the_cli_prints_records_and_saves_the_rate(tmp_path, capsys):
    assert tiny_finetune(tmp_path, ROWS, "--classifier-dropout", "0") == 0
    assert (
        "Head dropout 0 (--classifier-dropout; default: 0.1)" in capsys.readouterr().out
    )
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["classifier_dropout"] == 0.0
    model = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert model.output_dropout.rate == 0.0


def test_the_cli_refuses_it_for_squad_before_loading(tmp_path, capsys):
    assert (
        tiny_finetune(tmp_path, ROWS, "--classifier-dropout", "0.2", task="squad") == 2
    )
    err = capsys.readouterr().err
    assert "--task squad does not read --classifier-dropout" in err, err
    assert "Traceback" not in err
