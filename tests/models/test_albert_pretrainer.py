"""AlbertPretrainer: official MLM + SOP loss, fit on official features, save/load."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config, random_inputs, run_model_test
from numpy_ops import randomize

from albert_keras import AlbertBackbone, AlbertPretrainer

CONFIG = micro_config(vocab_size=60)


def official_features(batch=4, length=10, predictions=3, seed=0):
    """A batch in the official TFRecord feature format."""
    rng = np.random.default_rng(seed)
    x = random_inputs(batch=batch, length=length, vocab=60, seed=seed)
    weights = np.ones((batch, predictions), "float32")
    weights[1, 2:] = 0.0  # a padded prediction slot
    return {
        "input_ids": x["token_ids"],
        "input_mask": x["padding_mask"],
        "segment_ids": x["segment_ids"],
        "masked_lm_positions": rng.integers(1, 6, (batch, predictions)).astype("int32"),
        "masked_lm_ids": rng.integers(0, 60, (batch, predictions)).astype("int32"),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype("int32"),
    }


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_loss_is_the_official_formula():
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    randomize(model, seed=1, scale=0.3)
    x, y = AlbertPretrainer.features_to_xy(official_features())
    y = keras.tree.map_structure(np.asarray, y)
    pred = model(x)
    mlm_lp = log_softmax(np.asarray(pred["mlm_logits"], "float64"))
    mlm_ce = -np.take_along_axis(mlm_lp, y["mask_ids"][..., None], -1)[..., 0]
    w = y["mask_weights"]
    mlm = (w * mlm_ce).sum() / (w.sum() + 1e-5)
    sop_lp = log_softmax(np.asarray(pred["sop_logits"], "float64"))
    sop = -np.take_along_axis(sop_lp, y["sop_labels"][:, None], -1).mean()
    model.compile(optimizer="sgd")
    total = model.compute_loss(x, y, pred)
    assert abs(float(total) - (mlm + sop)) < 1e-5
    assert abs(float(model.mlm_loss_tracker.result()) - mlm) < 1e-5


def test_mlm_accuracy_and_loss_gradient_match_numpy():
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    randomize(model, seed=2, scale=0.3)
    x, y = AlbertPretrainer.features_to_xy(official_features(batch=6, seed=3))
    y = keras.tree.map_structure(np.asarray, y)
    pred = model(x)
    logits = np.asarray(pred["mlm_logits"], "float64")
    # Half the labels are the model's own argmax, so the accuracy is neither
    # 0 nor 1 and a wrong pick of rows or weights shows.
    ids = y["mask_ids"].copy()
    ids[::2] = logits.argmax(-1)[::2]
    y["mask_ids"] = ids
    w = y["mask_weights"]
    expected = (w * (logits.argmax(-1) == ids)).sum() / w.sum()
    assert 0.2 < expected < 0.8
    model.compile(optimizer="sgd")
    model.compute_loss(x, y, pred)
    result = model.compute_metrics(x, y, pred)
    assert abs(float(result["mlm_accuracy"]) - expected) < 1e-6

    # d(MLM loss)/d(logits) = w * (softmax - one_hot) / sum(w), the official
    # loss's gradient, through the written-out log-softmax.
    logits_t = tf.constant(pred["mlm_logits"])
    with tf.GradientTape() as tape:
        tape.watch(logits_t)
        mlm, _ = model._official_losses(y, dict(pred, mlm_logits=logits_t))
    grad = np.asarray(tape.gradient(mlm, logits_t))
    one_hot = np.eye(logits.shape[-1])[ids]
    reference = (
        w[..., None] * (np.exp(log_softmax(logits)) - one_hot) / (w.sum() + 1e-5)
    )
    assert max_abs_diff(grad, reference) < 1e-6

    # The same under XLA (the label is gathered with a custom gradient).
    @tf.function(jit_compile=True)
    def compiled_grad(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            mlm, _ = model._official_losses(y, dict(pred, mlm_logits=t))
        return tape.gradient(mlm, t)

    assert max_abs_diff(np.asarray(compiled_grad(logits_t)), reference) < 1e-6


def test_fit_on_official_features_lowers_the_loss():
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    model.compile(optimizer=keras.optimizers.Lamb(5e-2), jit_compile=True)
    features = official_features(batch=8)
    dataset = (
        tf.data.Dataset.from_tensor_slices(features)
        .batch(8)
        .map(AlbertPretrainer.features_to_xy)
        .repeat()
    )
    history = model.fit(dataset, steps_per_epoch=5, epochs=4, verbose=0, shuffle=False)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] - 0.1
    for key in ("mlm_loss", "sop_loss", "mlm_accuracy", "sop_accuracy"):
        assert key in history.history
    evaluated = model.evaluate(dataset, steps=1, verbose=0, return_dict=True)
    assert "mlm_accuracy" in evaluated


def test_save_load_and_heads():
    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    x, _ = AlbertPretrainer.features_to_xy(official_features())
    run_model_test(model, x)
    assert model.mlm_head.embedding_layer is model.backbone.embeddings
    out = model(x)
    assert out["mlm_logits"].shape == (4, 3, 60)
    assert out["sop_logits"].shape == (4, 2)
    # Backbone weights are shared, not copied, inside the pretrainer.
    assert model.count_params() == model.backbone.count_params() + (
        16 * 8 + 8 + 2 * 8 + 60 + 2 * 16 + 2
    )
    assert max_abs_diff(model(x)["sop_logits"], out["sop_logits"]) == 0.0


@pytest.mark.parametrize(
    "changes",
    [{}, {"inner_group_num": 2}, {"sharing": "none", "num_hidden_layers": 3}],
    ids=["all-shared", "inner-groups", "not-shared"],
)
def test_last_block_at_masked_rows_equals_the_full_backbone(changes):
    """The pretrainer computes its last block only at [CLS] and the masked rows;
    its logits and gradients equal the heads on the full backbone output."""
    model = AlbertPretrainer(AlbertBackbone(micro_config(vocab_size=60, **changes)))
    randomize(model, seed=4, scale=0.3)
    x, y = AlbertPretrainer.features_to_xy(official_features(length=12))
    full = model.backbone({k: x[k] for k in model.backbone.input})
    expected = {
        "mlm_logits": model.mlm_head(full["sequence_output"], x["mask_positions"]),
        "sop_logits": model.sop_head(full["pooled_output"]),
    }
    out = model(x)
    for key in expected:
        assert max_abs_diff(out[key], expected[key]) < 1e-5

    def gradients(outputs_of):
        with tf.GradientTape() as tape:
            pred = outputs_of()
            loss = sum(model._official_losses(y, pred))
        return tape.gradient(loss, model.trainable_variables)

    def full_outputs():
        seq = model.backbone({k: x[k] for k in model.backbone.input})
        return {
            "mlm_logits": model.mlm_head(seq["sequence_output"], x["mask_positions"]),
            "sop_logits": model.sop_head(seq["pooled_output"]),
        }

    fast, reference = gradients(lambda: model(x)), gradients(full_outputs)
    for variable, a, b in zip(model.trainable_variables, fast, reference, strict=True):
        assert a is not None and b is not None, variable.path
        a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
        assert max_abs_diff(a, b) < 1e-5, variable.path


LOAD_COMPILED = """
import sys, keras, numpy as np
import albert_keras.models  # the documented import before loading a .keras file
model = keras.saving.load_model(sys.argv[1])
print(type(model.optimizer).__name__, int(model.optimizer.iterations))
"""


def test_compiled_pretrainer_loads_after_importing_the_models(tmp_path):
    """A `.keras` file saved compiled (as `albert-keras pretrain` saves it) loads
    compiled in a fresh process that imported only `albert_keras.models`."""
    import os
    import subprocess
    import sys

    from albert_keras.training import create_optimizer

    model = AlbertPretrainer(AlbertBackbone(CONFIG))
    model.compile(optimizer=create_optimizer("lamb", 1e-3, 10, 2))
    x, y = AlbertPretrainer.features_to_xy(official_features())
    model.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path / "pretrainer.keras")
    model.save(path)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", LOAD_COMPILED, path],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ["FastLamb", "1"]
