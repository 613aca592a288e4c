"""Every model exports a SavedModel that serves its outputs without albert_keras."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs
from numpy_ops import randomize

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
)

CONFIG = micro_config(vocab_size=60)


def build(kind):
    backbone = AlbertBackbone(CONFIG)
    x = random_inputs(batch=2, length=8, vocab=60)
    if kind == "backbone":
        return backbone, x
    if kind == "pretrainer":
        return AlbertPretrainer(backbone), dict(
            x, mask_positions=np.array([[1, 2], [3, 4]], "int32")
        )
    if kind == "classifier":
        return AlbertClassifier(backbone, num_classes=3), x
    if kind == "span_qa":
        return AlbertSpanQA(backbone), x
    if kind == "squad_v2":
        p_mask = np.zeros((2, 8), "int32")
        p_mask[:, 1:3] = 1
        return AlbertSquadV2(backbone, start_n_top=2, end_n_top=2), dict(
            x, p_mask=p_mask, start_positions=np.array([4, 5], "int32")
        )
    model = AlbertMultipleChoice(backbone, num_choices=2)
    return model, {k: np.stack([v, v[::-1]], axis=1) for k, v in x.items()}


KINDS = [
    "backbone",
    "pretrainer",
    "classifier",
    "span_qa",
    "squad_v2",
    "multiple_choice",
]

# Loads each SavedModel of argv[1] (one folder per kind) and serves its inputs,
# all in one fresh Python: TensorFlow's start-up is most of the cost.
SERVE = """
import os, sys, numpy as np, tensorflow as tf
root = sys.argv[1]
for kind in sys.argv[2:]:
    folder = os.path.join(root, kind)
    loaded = tf.saved_model.load(os.path.join(folder, "sm"))
    x = dict(np.load(os.path.join(folder, "x.npz")))
    out = loaded.serve({k: tf.constant(v) for k, v in x.items()})
    np.savez(os.path.join(folder, "y.npz"), **{k: v.numpy() for k, v in out.items()})
assert "albert_keras" not in sys.modules
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """{kind: (expected outputs, outputs served without albert_keras)}."""
    root = tmp_path_factory.mktemp("export")
    expected = {}
    for kind in KINDS:
        model, x = build(kind)
        randomize(model, seed=3, scale=0.2)
        expected[kind] = model(x, training=False)
        model.export(str(root / kind / "sm"), verbose=False)
        np.savez(root / kind / "x.npz", **x)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    script = [sys.executable, "-c", textwrap.dedent(SERVE), str(root), *KINDS]
    subprocess.run(script, check=True, env=env)
    return {kind: (expected[kind], np.load(root / kind / "y.npz")) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_export_serves_the_same_outputs(kind, served):
    expected, outputs = served[kind]
    assert set(outputs.files) == set(expected)
    for key in expected:
        assert max_abs_diff(outputs[key], expected[key]) < 1e-5, key


def test_mixed_precision_fit_and_jit_of_a_task_model():
    model = AlbertClassifier(
        AlbertBackbone(CONFIG, dtype="mixed_bfloat16"), num_classes=2
    )
    x = random_inputs(batch=4, length=8, vocab=60)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    history = model.fit(x, np.array([0, 1, 1, 0]), epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert model(x)["logits"].dtype == "float32"  # the head's output is float32
