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


SERVE = """
import sys, numpy as np, tensorflow as tf
loaded = tf.saved_model.load(sys.argv[1])
x = dict(np.load(sys.argv[2]))
out = loaded.serve({k: tf.constant(v) for k, v in x.items()})
np.savez(sys.argv[3], **{k: v.numpy() for k, v in out.items()})
assert "albert_keras" not in sys.modules
"""


@pytest.mark.parametrize(
    "kind",
    ["backbone", "pretrainer", "classifier", "span_qa", "squad_v2", "multiple_choice"],
)
def test_export_serves_the_same_outputs(kind, tmp_path):
    model, x = build(kind)
    randomize(model, seed=3, scale=0.2)
    expected = model(x, training=False)
    model.export(str(tmp_path / "sm"), verbose=False)
    np.savez(tmp_path / "x.npz", **x)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(SERVE),
            str(tmp_path / "sm"),
            str(tmp_path / "x.npz"),
            str(tmp_path / "y.npz"),
        ],
        check=True,
        env=env,
    )
    served = np.load(tmp_path / "y.npz")
    assert set(served.files) == set(expected)
    for key in expected:
        assert max_abs_diff(served[key], expected[key]) < 1e-5, key


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
