"""Our models written as official checkpoints: the official code restores them.

`written` converts every case, writes it back with `save_official_checkpoint`
and runs the official graph on all the written checkpoints in one oracle
process. Unchanged weights must give the official outputs bit for bit; changed
weights (and a model with no sharing, written as one group per layer) must
give our outputs; Keras -> TF1 -> Keras must give identical weights.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff
from converter_oracle import (
    BASE_CONFIG,
    CASES,
    load_outputs,
    official_inputs,
    run_official,
    save_inputs,
)
from test_official_exactness import TOLERANCE, diffs_against

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from checkpoints_convert import load_official_checkpoint, save_official_checkpoint

CLASSIFIER_CASE = "v1_dropout_classifier"


def perturb(model, seed):
    """New values for every weight, so the official code must read ours."""
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(w.numpy() + rng.normal(0, 0.1, w.shape).astype("float32"))


@pytest.fixture(scope="module")
def written(official, tmp_path_factory):
    """{key: (model, prefix, official outputs file, inputs)} after one oracle run."""
    root = tmp_path_factory.mktemp("written")
    entries, jobs = {}, []

    def add(key, model, outputs, *extra):
        folder = root / key
        prefix = save_official_checkpoint(model, str(folder / "model.ckpt-best"))
        inputs = save_inputs(outputs, str(folder / "inputs.npz"))
        result = str(folder / "official.npz")
        config = str(folder / "albert_config.json")
        jobs.append(["--ckpt", prefix, "--config", config, "--inputs", inputs])
        jobs[-1] += ["--out", result, *extra]
        entries[key] = (model, prefix, result, outputs)

    for case in CASES:
        name = case["name"]
        model = load_official_checkpoint(official[name], "pretrainer")
        add(name, model, load_outputs(official[name]))
    classifier = load_official_checkpoint(official[CLASSIFIER_CASE], "classifier")
    outputs = load_outputs(official[CLASSIFIER_CASE])
    add("classifier", classifier, outputs, "--num_labels", 3, "--no_pretraining_heads")
    changed = load_official_checkpoint(official["l5_g2_inner2"], "pretrainer")
    perturb(changed, seed=1)
    add("changed_l5_g2_inner2", changed, load_outputs(official["l5_g2_inner2"]))
    # No sharing at all: the official layout with one group per layer.
    keras.utils.set_random_seed(3)
    config = AlbertConfig.from_dict({**BASE_CONFIG, "num_hidden_layers": 4})
    unshared = AlbertPretrainer(AlbertBackbone(config.replace(sharing="none")))
    perturb(unshared, seed=2)
    add("sharing_none", unshared, load_outputs(official["groups_l4_g2"]))

    run_official(jobs, str(root))
    return entries


@pytest.mark.parametrize("case", [c["name"] for c in CASES])
def test_official_code_restores_our_checkpoint_bit_for_bit(written, case):
    model, prefix, result, outputs = written[case]
    with np.load(result) as theirs:
        assert set(theirs.files) <= set(outputs)
        for key in theirs.files:
            np.testing.assert_array_equal(theirs[key], outputs[key], err_msg=key)


def test_official_classifier_head_restores_ours(written):
    model, prefix, result, outputs = written["classifier"]
    with np.load(result) as theirs:
        np.testing.assert_array_equal(
            theirs["classifier_logits"], outputs["classifier_logits"]
        )


@pytest.mark.parametrize("key", ["changed_l5_g2_inner2", "sharing_none"])
def test_official_code_computes_our_numbers_on_our_weights(written, key):
    model, prefix, result, outputs = written[key]
    with np.load(result) as data:
        theirs = {**outputs, **data}
    diffs = diffs_against(model, theirs)
    assert max(diffs.values()) <= TOLERANCE, diffs


@pytest.mark.parametrize(
    "key", ["l5_g2_inner2", "e_equals_h", "classifier", "sharing_none"]
)
def test_keras_tf1_keras_is_bit_exact(written, key):
    model, prefix, _, _ = written[key]
    kind = type(model)
    again = load_official_checkpoint(os.path.dirname(prefix), model=kind)
    assert again.backbone.config == model.backbone.config.replace(
        num_hidden_groups=again.backbone.config.num_hidden_groups
    )
    for a, b in zip(model.weights, again.weights, strict=True):
        assert a.path == b.path
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    x = official_inputs(written[key][3])
    ours, theirs = keras.tree.flatten(model(x)), keras.tree.flatten(again(x))
    for a, b in zip(ours, theirs, strict=True):
        assert max_abs_diff(a, b) == 0.0


def test_sharing_none_is_written_with_one_group_per_layer(written):
    _, prefix, _, _ = written["sharing_none"]
    config = AlbertConfig.from_json_file(os.path.dirname(prefix))
    assert (config.sharing, config.num_hidden_groups) == ("none", 4)
    names = {name for name, _ in tf.train.list_variables(prefix)}
    groups = {n.split("/")[3] for n in names if "/transformer/" in n}
    assert groups == {"group_0", "group_1", "group_2", "group_3"}


def test_bfloat16_model_round_trips_exactly(official, tmp_path):
    model = load_official_checkpoint(official["relu"], "pretrainer", dtype="bfloat16")
    prefix = save_official_checkpoint(model, str(tmp_path / "bf16" / "model.ckpt"))
    again = load_official_checkpoint(prefix, "pretrainer", dtype="bfloat16")
    assert model.backbone.embeddings.word_embeddings.dtype == "bfloat16"
    for a, b in zip(model.weights, again.weights, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
