"""Checkpoints the official TF1 code wrote load with the official numbers.

Every case of tests/oracle/cases.py (all-shared, L=4 G=2, inner groups, L=5
G=2 inner 2, E == H, relu, v1 dropout with a classifier head and optimizer
slots) and the TF1 Hub module folders: each output of the official graph
(embedding output, every encoder layer, sequence and pooled output, MLM, SOP
and classifier logits) against ours by max abs diff.
"""

import shutil

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff
from converter_oracle import CASES, MEASURED, load_outputs, official_inputs

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertPretrainer
from albert_keras.sample_text import SPM_MODEL_PATH
from checkpoints_convert import CheckpointReader, load_official_checkpoint

TOLERANCE = 1e-5  # float32


def diffs_against(model, outputs):
    """{output: max abs diff} of a pretrainer (or backbone) against `outputs`."""
    x = official_inputs(outputs)
    backbone = getattr(model, "backbone", model)
    ours = backbone.layer_outputs(x)
    diffs = {
        "embedding_output": max_abs_diff(
            ours["embedding_output"], outputs["embedding_output"]
        )
    }
    layers = [k for k in outputs if k.startswith("layer_")]
    assert len(layers) == len(ours["encoder_layers"])
    for k, layer in enumerate(ours["encoder_layers"]):
        diffs[f"layer_{k}"] = max_abs_diff(layer, outputs[f"layer_{k}"])
    for key in ("sequence_output", "pooled_output"):
        diffs[key] = max_abs_diff(ours[key], outputs[key])
    if isinstance(model, AlbertPretrainer):
        predictions = model(x)
        mlm = keras.ops.convert_to_numpy(predictions["mlm_logits"])
        diffs["mlm_logits"] = max_abs_diff(
            mlm.reshape(outputs["mlm_logits"].shape), outputs["mlm_logits"]
        )
        diffs["sop_logits"] = max_abs_diff(
            predictions["sop_logits"], outputs["sop_logits"]
        )
    return diffs


@pytest.mark.parametrize("case", [c["name"] for c in CASES])
def test_official_checkpoint_gives_official_outputs(official, case):
    outputs = load_outputs(official[case])
    model = load_official_checkpoint(official[case], model="pretrainer")
    assert isinstance(model, AlbertPretrainer)
    diffs = diffs_against(model, outputs)
    if "classifier_logits" in outputs:
        classifier = load_official_checkpoint(official[case], model=AlbertClassifier)
        # num_classes comes from the root output_weights.
        assert classifier.num_classes == outputs["classifier_logits"].shape[-1]
        logits = classifier(official_inputs(outputs))["logits"]
        diffs["classifier_logits"] = max_abs_diff(logits, outputs["classifier_logits"])
    MEASURED[case] = diffs
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= TOLERANCE, (worst, diffs[worst])


@pytest.mark.parametrize("suffix", ["_hub", "_hub_prefixed"])
def test_tf1_hub_module_folders(official, suffix):
    """variables/variables.* with plain or module/ names, assets/albert_config.json."""
    model = load_official_checkpoint(official["all_shared" + suffix], "pretrainer")
    report = model.conversion_report
    assert report.checkpoint.endswith("variables/variables")
    assert report.config_source.endswith("assets/albert_config.json")
    diffs = diffs_against(model, load_outputs(official["all_shared"]))
    MEASURED["all_shared" + suffix] = diffs
    assert max(diffs.values()) <= TOLERANCE


def test_training_checkpoint_ignores_optimizer_state(official):
    model = load_official_checkpoint(official["v1_dropout_classifier"], "classifier")
    report = model.conversion_report
    assert "global_step" in report.ignored
    slots = [n for n in report.ignored if n.endswith(("/adam_m", "/adam_v"))]
    # Two slots per trainable variable: backbone, classifier and MLM/SOP heads.
    assert len(slots) == 2 * (len(report.loaded) + len(report.skipped_heads))
    assert not set(report.ignored) & set(report.loaded)


def test_backbone_skips_and_reports_the_heads(official, caplog):
    folder = official["v1_dropout_classifier"]
    with caplog.at_level("INFO", logger="checkpoints_convert"):
        model = load_official_checkpoint(folder)
    assert isinstance(model, AlbertBackbone)
    report = model.conversion_report
    assert set(report.skipped_heads) == {
        "cls/predictions/transform/dense/kernel",
        "cls/predictions/transform/dense/bias",
        "cls/predictions/transform/LayerNorm/beta",
        "cls/predictions/transform/LayerNorm/gamma",
        "cls/predictions/output_bias",
        "cls/seq_relationship/output_weights",
        "cls/seq_relationship/output_bias",
        "output_weights",
        "output_bias",
    }
    assert "skipped 9 head variables" in caplog.text
    outputs = load_outputs(folder)
    assert max(diffs_against(model, outputs).values()) <= TOLERANCE


def test_model_classes_load_by_class(official):
    folder = official["groups_l4_g2"]
    backbone = load_official_checkpoint(folder, model=AlbertBackbone)
    pretrainer = load_official_checkpoint(folder, model=AlbertPretrainer)
    for a, b in zip(
        backbone.get_weights(), pretrainer.backbone.get_weights(), strict=True
    ):
        np.testing.assert_array_equal(a, b)


def test_new_task_head_on_a_pretraining_checkpoint(official):
    """A classifier on a release: backbone loaded, the head new and reported."""
    folder = official["all_shared"]
    model = load_official_checkpoint(folder, "classifier", num_classes=5, dropout=0.0)
    report = model.conversion_report
    assert report.new_heads == ("classifier",)
    assert model.classifier.kernel.shape == (32, 5)
    assert "cls/seq_relationship/output_weights" in report.skipped_heads
    span = load_official_checkpoint(folder, "span_qa")
    assert span.conversion_report.new_heads == ("span_qa",)
    # Without num_classes there is nothing to size the head from.
    with pytest.raises(ValueError, match="pass num_classes=N"):
        load_official_checkpoint(folder, "classifier")


def test_hub_assets_give_config_and_vocabulary(official, tmp_path):
    hub = tmp_path / "hub"
    shutil.copytree(official["all_shared_hub_prefixed"], hub)
    shutil.copy(SPM_MODEL_PATH, hub / "assets" / "30k-clean.model")
    reader = CheckpointReader(str(hub))
    assert reader.config_path == str(hub / "assets" / "albert_config.json")
    assert reader.vocab_path == str(hub / "assets" / "30k-clean.model")
    assert all(not n.startswith("module/") for n in reader.names)
