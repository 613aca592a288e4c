"""AlbertSquadV2 from an official run_squad v2 checkpoint equals the official graph."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from albert_keras import AlbertBackbone, AlbertConfig
from albert_keras.models import AlbertSquadV2
from checkpoints_convert import (
    load_official_checkpoint,
    official_weights,
    save_official_checkpoint,
)

ORACLE = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "oracle", "squad_v2_oracle.py"
)
CONFIG = {
    "vocab_size": 120,
    "embedding_size": 16,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_hidden_groups": 1,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "inner_group_num": 1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "max_position_embeddings": 32,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
}
MEASURED = {}


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    folder = tmp_path_factory.mktemp("squad_v2")
    (folder / "albert_config.json").write_text(json.dumps(CONFIG))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [
            sys.executable,
            ORACLE,
            "--config",
            str(folder / "albert_config.json"),
            "--out",
            str(folder),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return folder, dict(np.load(folder / "outputs.npz"))


def _inputs(data, with_start=True):
    x = {
        "token_ids": data["input_ids"],
        "segment_ids": data["segment_ids"],
        "padding_mask": data["input_mask"],
        "p_mask": data["p_mask"],
    }
    if with_start:
        x["start_positions"] = data["start_positions"]
    return x


def _log_prob_diff(ours, theirs, p_mask):
    """Max abs diff where an answer can be (elsewhere both are about -1e30)."""
    keep = p_mask == 0
    assert np.all(ours[~keep] < -1e29) and np.all(theirs[~keep] < -1e29)
    return float(np.max(np.abs(ours[keep] - theirs[keep])))


def test_official_variables_are_the_table_rows(official):
    """The names and shapes create_v2_model makes are exactly the table's."""
    folder, _ = official
    variables = json.loads((folder / "variables.json").read_text())
    variables.pop("global_step", None)
    model = AlbertSquadV2(AlbertBackbone(AlbertConfig.from_dict(CONFIG)), 3, 2)
    ours = {e.name: list(e.variable.shape) for e in official_weights(model)}
    assert ours == variables
    assert sorted(n for n in ours if not n.startswith("bert/")) == [
        "answer_class/dense_0/bias",
        "answer_class/dense_0/kernel",
        "answer_class/dense_1/kernel",
        "end_logits/LayerNorm/beta",
        "end_logits/LayerNorm/gamma",
        "end_logits/dense_0/bias",
        "end_logits/dense_0/kernel",
        "end_logits/dense_1/bias",
        "end_logits/dense_1/kernel",
        "start_logits/dense/bias",
        "start_logits/dense/kernel",
    ]


def test_inference_beam_matches_the_official_head(official):
    folder, data = official
    model = load_official_checkpoint(
        str(folder), model="squad_v2", start_n_top=3, end_n_top=2
    )
    assert isinstance(model, AlbertSquadV2)
    assert not model.conversion_report.new_heads
    out = model.predict(_inputs(data, with_start=False), verbose=0)
    np.testing.assert_array_equal(out["start_top_index"], data["start_top_index"])
    np.testing.assert_array_equal(out["end_top_index"], data["end_top_index"])
    diffs = {
        key: float(np.max(np.abs(out[key] - data[key])))
        for key in ("start_top_log_probs", "end_top_log_probs", "cls_logits")
    }
    MEASURED["inference"] = diffs
    print(f"\nSQuAD v2 head vs official (beam): {diffs}")
    assert max(diffs.values()) < 1e-5


def test_training_outputs_match_the_official_head(official):
    folder, data = official
    # The oracle's dropout_prob is 0 (to compare); the official default 0.1.
    model = load_official_checkpoint(
        str(folder), model="squad_v2", start_n_top=3, end_n_top=2, dropout=0.0
    )
    out = model(_inputs(data), training=True)  # conditioned on the gold start
    diffs = {
        "start_log_probs": _log_prob_diff(
            np.asarray(out["start_log_probs"]),
            data["train_start_log_probs"],
            data["p_mask"],
        ),
        "end_log_probs": _log_prob_diff(
            np.asarray(out["end_log_probs"]),
            data["train_end_log_probs"],
            data["p_mask"],
        ),
        "cls_logits": float(
            np.max(np.abs(np.asarray(out["cls_logits"]) - data["train_cls_logits"]))
        ),
    }
    MEASURED["training"] = diffs
    print(f"\nSQuAD v2 head vs official (training): {diffs}")
    assert max(diffs.values()) < 1e-5


def test_official_loss_value(official):
    """The compiled loss equals the official total loss computed in NumPy."""
    folder, data = official
    model = load_official_checkpoint(
        str(folder), model="squad_v2", start_n_top=3, end_n_top=2
    )
    losses, weights = AlbertSquadV2.official_losses()
    model.compile(loss=losses, loss_weights=weights)
    ends = np.array([6, 0, 7], "int32")
    impossible = np.array([0, 1, 0], "float32")
    y = {
        "start_log_probs": data["start_positions"],
        "end_log_probs": ends,
        "cls_logits": impossible,
    }
    loss = model.evaluate(_inputs(data), y, batch_size=3, verbose=0, return_dict=True)
    rows = np.arange(3)
    start_nll = -data["train_start_log_probs"][rows, data["start_positions"]].mean()
    end_nll = -data["train_end_log_probs"][rows, ends].mean()
    z = data["train_cls_logits"]
    bce = np.mean(np.maximum(z, 0) - z * impossible + np.log1p(np.exp(-np.abs(z))))
    expected = 0.5 * (start_nll + end_nll) + 0.5 * bce
    assert loss["loss"] == pytest.approx(expected, rel=1e-5)


def test_round_trip_through_the_official_format(official, tmp_path):
    folder, data = official
    model = load_official_checkpoint(
        str(folder), model="squad_v2", start_n_top=3, end_n_top=2
    )
    save_official_checkpoint(model, str(tmp_path / "ours"))
    again = load_official_checkpoint(
        str(tmp_path / "ours"), model="squad_v2", start_n_top=3, end_n_top=2
    )
    for a, b in zip(model.weights, again.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    x = _inputs(data, with_start=False)
    first, second = model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])
