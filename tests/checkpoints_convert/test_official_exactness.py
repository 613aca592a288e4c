"""Checkpoints written by the official TF1 code load with the official numbers."""

import json

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff
from cases import CASES
from conftest import load_outputs, official_inputs, run_oracle

from albert_keras import AlbertClassifier, AlbertPretrainer
from checkpoints_convert import load_official_checkpoint, save_official_checkpoint

TOLERANCE = 1e-5
MEASURED = {}  # case -> max abs diff, printed at the end of the module


def compare(model, outputs):
    """Max abs diff of every official output against ours."""
    x = official_inputs(outputs)
    backbone = model.backbone
    ours = backbone.layer_outputs(x)
    diffs = {
        "embedding_output": max_abs_diff(
            ours["embedding_output"], outputs["embedding_output"]
        ),
        "sequence_output": max_abs_diff(
            ours["sequence_output"], outputs["sequence_output"]
        ),
        "pooled_output": max_abs_diff(ours["pooled_output"], outputs["pooled_output"]),
    }
    layers = sorted(k for k in outputs if k.startswith("layer_"))
    assert len(layers) == len(ours["encoder_layers"])
    for k, layer in enumerate(ours["encoder_layers"]):
        diffs[f"layer_{k}"] = max_abs_diff(layer, outputs[f"layer_{k}"])
    predictions = model(x)
    vocab = outputs["mlm_logits"].shape[-1]
    mlm = np.reshape(keras.ops.convert_to_numpy(predictions["mlm_logits"]), (-1, vocab))
    diffs["mlm_logits"] = max_abs_diff(mlm, outputs["mlm_logits"])
    diffs["sop_logits"] = max_abs_diff(predictions["sop_logits"], outputs["sop_logits"])
    return diffs


@pytest.mark.parametrize("case", [c["name"] for c in CASES])
def test_official_checkpoint_gives_official_outputs(official, case):
    outputs = load_outputs(official[case])
    model = load_official_checkpoint(official[case], model="pretrainer")
    assert isinstance(model, AlbertPretrainer)
    diffs = compare(model, outputs)
    worst = max(diffs, key=diffs.get)
    MEASURED[case] = diffs[worst]
    assert diffs[worst] <= TOLERANCE, (worst, diffs[worst])
    if "classifier_logits" in outputs:
        classifier = load_official_checkpoint(official[case], model="classifier")
        assert isinstance(classifier, AlbertClassifier)
        assert classifier.num_classes == outputs["classifier_logits"].shape[-1]
        got = classifier(official_inputs(outputs))["logits"]
        assert max_abs_diff(got, outputs["classifier_logits"]) <= TOLERANCE
        # A training checkpoint: optimizer slots and global_step are ignored.
        report = classifier.conversion_report
        assert "global_step" in report["ignored"]
        assert any(n.endswith("/adam_m") for n in report["ignored"])


@pytest.mark.parametrize("variant", ["all_shared_hub", "all_shared_hub_prefixed"])
def test_tf1_hub_module_folders(official, variant):
    folder = official["all_shared"] + variant[len("all_shared") :]
    outputs = load_outputs(official["all_shared"])
    model = load_official_checkpoint(folder, model="pretrainer")
    assert model.conversion_report["checkpoint"].endswith("variables/variables")
    assert max(compare(model, outputs).values()) <= TOLERANCE


def test_backbone_only_skips_and_reports_heads(official):
    model = load_official_checkpoint(official["v1_dropout_classifier"])
    report = model.conversion_report
    assert "cls/seq_relationship/output_weights" in report["skipped_heads"]
    assert "output_weights" in report["skipped_heads"]
    outputs = load_outputs(official["v1_dropout_classifier"])
    ours = model(official_inputs(outputs))
    assert max_abs_diff(ours["pooled_output"], outputs["pooled_output"]) <= TOLERANCE


@pytest.mark.parametrize("case", ["all_shared", "l5_g2_inner2", "e_equals_h"])
def test_round_trip_through_the_official_code(official, case, tmp_path):
    model = load_official_checkpoint(official[case], model="pretrainer")
    # Give our weights new values so the official code must read ours.
    rng = np.random.default_rng(0)
    for w in model.weights:
        w.assign(w.numpy() + rng.normal(0, 0.01, w.shape).astype("float32"))
    prefix = save_official_checkpoint(model, str(tmp_path / "ours" / "model.ckpt-best"))
    # Keras -> TF1 -> Keras is bit-exact.
    again = load_official_checkpoint(str(tmp_path / "ours"), model="pretrainer")
    for a, b in zip(model.get_weights(), again.get_weights(), strict=True):
        assert np.array_equal(a, b)
    # The official code restores our checkpoint and computes our numbers.
    outputs = load_outputs(official[case])
    inputs = tmp_path / "inputs.npz"
    np.savez(
        inputs,
        **{
            k: outputs[k]
            for k in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
        },
    )
    run_oracle(
        "run",
        "--ckpt",
        prefix,
        "--config",
        str(tmp_path / "ours" / "albert_config.json"),
        "--inputs",
        str(inputs),
        "--out",
        str(tmp_path / "theirs.npz"),
    )
    theirs = dict(
        np.load(tmp_path / "theirs.npz"),
        **{
            k: outputs[k]
            for k in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
        },
    )
    assert max(compare(model, theirs).values()) <= TOLERANCE


def test_classifier_round_trip(official, tmp_path):
    case = "v1_dropout_classifier"
    model = load_official_checkpoint(official[case], model="classifier")
    prefix = save_official_checkpoint(model, str(tmp_path / "c" / "model.ckpt-best"))
    outputs = load_outputs(official[case])
    np.savez(
        tmp_path / "x.npz",
        **{
            k: outputs[k]
            for k in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
        },
    )
    run_oracle(
        "run",
        "--ckpt",
        prefix,
        "--config",
        str(tmp_path / "c" / "albert_config.json"),
        "--inputs",
        str(tmp_path / "x.npz"),
        "--out",
        str(tmp_path / "y.npz"),
        "--num_labels",
        "3",
        "--no_pretraining_heads",
    )
    theirs = np.load(tmp_path / "y.npz")
    assert (
        max_abs_diff(theirs["classifier_logits"], outputs["classifier_logits"])
        <= TOLERANCE
    )


def test_zz_report_measured_diffs(capsys):
    with capsys.disabled():
        print(
            "\nmax abs diff vs the official TF1 code: "
            + json.dumps({k: f"{v:.1e}" for k, v in MEASURED.items()})
        )
