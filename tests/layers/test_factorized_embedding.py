import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, random_inputs, run_layer_test
from numpy_ops import f64, layer_norm, randomize

from albert_keras.layers import FactorizedEmbedding


@pytest.mark.parametrize("hidden", [24, 16])
def test_matches_numpy_reference(hidden):
    layer = FactorizedEmbedding(50, 16, hidden, max_sequence_length=12)
    x = random_inputs(batch=2, length=9, vocab=50)
    layer(x["token_ids"], x["segment_ids"])
    randomize(layer)
    out = run_layer_test(layer, (x["token_ids"], x["segment_ids"]))
    emb = (
        f64(layer.word_embeddings)[x["token_ids"]]
        + f64(layer.token_type_embeddings)[x["segment_ids"]]
        + f64(layer.position_embeddings)[None, :9]
    )
    emb = layer_norm(emb, f64(layer.layer_norm.gamma), f64(layer.layer_norm.beta))
    if hidden == 16:
        # E == H: no projection at all, like the official graph.
        assert layer.projection is None
        expected = emb
    else:
        expected = emb @ f64(layer.projection.kernel) + f64(layer.projection.bias)
    assert max_abs_diff(out, expected) < 1e-5


def test_sequence_longer_than_positions_is_a_clear_error():
    layer = FactorizedEmbedding(50, 8, 8, max_sequence_length=4)
    ids = np.zeros((1, 6), "int32")
    with pytest.raises(ValueError, match="Sequence length 6 exceeds"):
        layer(ids, ids)


def test_mixed_precision_sums_the_float32_tables_before_one_cast():
    """The lookups read float32 tables; their sum is rounded to bfloat16 once."""
    layer = FactorizedEmbedding(
        50, 16, 24, max_sequence_length=12, dtype="mixed_bfloat16"
    )
    x = random_inputs(batch=2, length=9, vocab=50)
    _, unprojected = layer(x["token_ids"], x["segment_ids"], return_unprojected=True)
    randomize(layer)
    _, unprojected = layer(x["token_ids"], x["segment_ids"], return_unprojected=True)
    emb = (
        np.asarray(layer.word_embeddings)[x["token_ids"]]
        + np.asarray(layer.token_type_embeddings)[x["segment_ids"]]
        + np.asarray(layer.position_embeddings)[None, :9]
    )
    # LayerNorm of bfloat16(emb), computed in float32 (as Keras's mixed
    # LayerNormalization does), then cast to bfloat16.
    rounded = f64(keras.ops.cast(keras.ops.cast(emb, "bfloat16"), "float32"))
    gamma, beta = f64(layer.layer_norm.gamma), f64(layer.layer_norm.beta)
    expected = layer_norm(rounded, gamma, beta)
    assert keras.backend.standardize_dtype(unprojected.dtype) == "bfloat16"
    # One bfloat16 rounding of the output (2^-8 relative) and nothing more.
    assert max_abs_diff(unprojected, expected) < 0.02 * np.abs(expected).max()
    # The gradients of the tables are float32 row updates, not bfloat16.
    import tensorflow as tf

    tables = [layer.word_embeddings.value, layer.token_type_embeddings.value]
    with tf.GradientTape() as tape:
        out = layer(x["token_ids"], x["segment_ids"])
        loss = tf.reduce_sum(tf.cast(out, "float32"))
    for grad in tape.gradient(loss, tables):
        assert isinstance(grad, tf.IndexedSlices) and grad.values.dtype == tf.float32


JAX_SCATTERS = """
import numpy as np, jax, keras
from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
config = AlbertConfig.from_preset("albert_tiny")
model = AlbertPretrainer(AlbertBackbone(config, dtype="mixed_bfloat16"))
ids = np.ones((2, 16), "int32")
x = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids,
     "mask_positions": np.ones((2, 3), "int32")}
fixed = [v.value for v in model.non_trainable_variables]
def loss(trainable):
    out = model.stateless_call(trainable, fixed, x, training=True)[0]
    return out["mlm_logits"].sum() + out["sop_logits"].sum()
jaxpr = jax.make_jaxpr(jax.grad(loss))([v.value for v in model.trainable_variables])
found = []
def walk(j):
    for e in j.eqns:
        if e.primitive.name.startswith("scatter"):
            found.append(str(e.outvars[0].aval))
        for p in e.params.values():
            inner = getattr(p, "jaxpr", None)
            if inner is not None:
                walk(getattr(inner, "jaxpr", inner))
walk(jaxpr.jaxpr)
print(" ".join(found))
"""


def test_gradient_scatters_are_float32_under_jax_mixed_precision():
    """Guards a GPU slowdown: bfloat16 scatter-adds ran 17x slower (H200, JAX)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run(
        [sys.executable, "-c", JAX_SCATTERS],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # albert_tiny: V=1000, E=32, 2 segments.
    assert "float32[1000,32]" in out and "float32[2,32]" in out, out
    # And the gathers at the masked positions (MLM head, last attention
    # block), rows of the flattened batch: [batch * length, H] = [32, 64].
    assert "float32[32,64]" in out, out
    assert not any("float16" in s for s in out), out
