"""AlbertBackbone: numbers vs NumPy for every sharing mode, save/load, export."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, random_inputs, run_model_test
from numpy_ops import attention, f64, feed_forward, layer_norm, randomize

from albert_keras import AlbertBackbone, AlbertConfig

TINY = dict(
    vocab_size=80,
    embedding_size=16,
    hidden_size=32,
    num_hidden_layers=4,
    num_hidden_groups=2,
    num_attention_heads=4,
    intermediate_size=48,
    max_position_embeddings=24,
)


def numpy_forward(backbone, x):
    """Float64 forward pass reading our weights block by block."""
    emb = backbone.embeddings
    h = (
        f64(emb.word_embeddings)[x["token_ids"]]
        + f64(emb.token_type_embeddings)[x["segment_ids"]]
        + f64(emb.position_embeddings)[None, : x["token_ids"].shape[1]]
    )
    h = layer_norm(h, f64(emb.layer_norm.gamma), f64(emb.layer_norm.beta))
    if emb.projection is not None:
        h = h @ f64(emb.projection.kernel) + f64(emb.projection.bias)
    config = backbone.config
    for layer in range(config.num_hidden_layers):
        for inner in range(config.inner_group_num):
            block = backbone.encoder.block(layer, inner)
            h = attention(block.attention, h, x["padding_mask"])
            h = feed_forward(block.feed_forward, h)
    pooled = np.tanh(h[:, 0] @ f64(backbone.pooler.kernel) + f64(backbone.pooler.bias))
    return h, pooled


def expected_owner(config, part, layer):
    """Who owns a sub-block under each sharing mode (the paper's Table 4)."""
    group = int(layer / config.num_hidden_layers * config.num_hidden_groups)
    shared = {"all": True, "none": False, "attention": part == "attention"}
    shared["ffn"] = part == "feed_forward"
    return ("group", group) if shared[config.sharing] else ("layer", layer)


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn", "none"])
@pytest.mark.parametrize("inner", [1, 2])
def test_sharing_modes_structure_and_numbers(sharing, inner):
    config = AlbertConfig(**TINY, sharing=sharing, inner_group_num=inner)
    backbone = AlbertBackbone(config)
    randomize(backbone, seed=3)
    # Structure: two layers share a sub-block iff the paper says they do.
    for part in ("attention", "feed_forward"):
        for i in range(inner):
            for a in range(4):
                for b in range(4):
                    same = getattr(backbone.encoder.block(a, i), part) is getattr(
                        backbone.encoder.block(b, i), part
                    )
                    owners_equal = expected_owner(config, part, a) == expected_owner(
                        config, part, b
                    )
                    assert same == owners_equal, (part, a, b)
            # Inner blocks never share with each other.
            assert (
                getattr(backbone.encoder.block(0, 0), part)
                is not getattr(backbone.encoder.block(0, i), part)
                or i == 0
            )
    x = random_inputs(batch=3, length=10, vocab=80)
    out = backbone(x)
    seq, pooled = numpy_forward(backbone, x)
    assert max_abs_diff(out["sequence_output"], seq) < 1e-5
    assert max_abs_diff(out["pooled_output"], pooled) < 1e-5


def test_layer_outputs_lists_every_block():
    config = AlbertConfig(**dict(TINY, num_hidden_layers=5), inner_group_num=2)
    backbone = AlbertBackbone(config)
    x = random_inputs(batch=2, length=6, vocab=80)
    outs = backbone.layer_outputs(x)
    assert len(outs["encoder_layers"]) == 10
    assert outs["embedding_output"].shape == (2, 6, 16)
    ref = backbone(x)
    assert max_abs_diff(outs["sequence_output"], ref["sequence_output"]) == 0.0
    assert max_abs_diff(outs["pooled_output"], ref["pooled_output"]) < 1e-6


def test_save_load_fit_and_config_round_trip():
    backbone = AlbertBackbone(AlbertConfig(**TINY, sharing="attention"))
    x = random_inputs(batch=2, length=8, vocab=80)
    run_model_test(backbone, x)
    clone = AlbertBackbone.from_config(backbone.get_config())
    assert clone.config == backbone.config


def test_dropout_only_in_training():
    config = AlbertConfig(**TINY, hidden_dropout_prob=0.3)
    backbone = AlbertBackbone(config)
    x = random_inputs(batch=2, length=8, vocab=80)
    a = backbone(x, training=False)["sequence_output"]
    b = backbone(x, training=False)["sequence_output"]
    c = backbone(x, training=True)["sequence_output"]
    assert max_abs_diff(a, b) == 0.0 and max_abs_diff(a, c) > 1e-3


def test_mixed_bfloat16_and_jit_compile():
    config = AlbertConfig(**TINY)
    x = random_inputs(batch=2, length=8, vocab=80)
    fp32 = AlbertBackbone(config)
    randomize(fp32, seed=5, scale=0.1)
    bf16 = AlbertBackbone(config, dtype="mixed_bfloat16")
    bf16.set_weights(fp32.get_weights())
    assert all(w.dtype == "float32" for w in bf16.weights)
    # The matmuls really run in bfloat16.
    assert bf16.encoder.blocks[0].attention.query.compute_dtype == "bfloat16"
    out16 = bf16(x)["sequence_output"]
    assert keras.backend.standardize_dtype(out16.dtype) == "bfloat16"
    ref = fp32(x)["sequence_output"]
    assert 0 < max_abs_diff(out16, ref) < 0.15
    fp32.compile(jit_compile=True)
    jitted = fp32.predict_on_batch(x)["sequence_output"]
    assert max_abs_diff(jitted, ref) < 1e-5


def test_mixed_bfloat16_survives_save_load_and_heads(tmp_path):
    from albert_keras import AlbertClassifier

    x = random_inputs(batch=2, length=8, vocab=80)
    bf16 = AlbertBackbone(AlbertConfig(**TINY), dtype="mixed_bfloat16")
    randomize(bf16, seed=6, scale=0.1)
    assert bf16.dtype_policy.name == "mixed_bfloat16"
    # A head over it computes in bfloat16 too, as under the global policy.
    assert AlbertClassifier(bf16, 2).classifier.compute_dtype == "bfloat16"
    bf16.save(tmp_path / "bf16.keras")
    loaded = keras.saving.load_model(tmp_path / "bf16.keras")
    assert loaded.encoder.blocks[0].attention.query.compute_dtype == "bfloat16"
    want = bf16(x)["sequence_output"]
    assert max_abs_diff(loaded(x)["sequence_output"], want) == 0.0
    fp32 = AlbertBackbone(AlbertConfig(**TINY))
    fp32.set_weights(bf16.get_weights())
    assert max_abs_diff(fp32(x)["sequence_output"], want) > 1e-4


def test_export_serves_without_albert_keras(tmp_path):
    backbone = AlbertBackbone(AlbertConfig(**TINY))
    randomize(backbone, seed=7, scale=0.1)
    x = random_inputs(batch=2, length=8, vocab=80)
    expected = backbone(x)
    path = str(tmp_path / "saved_model")
    backbone.export(path, verbose=False)
    np.savez(tmp_path / "inputs.npz", **x)
    script = textwrap.dedent(
        f"""
        import sys, numpy as np, tensorflow as tf
        loaded = tf.saved_model.load({path!r})
        x = dict(np.load({str(tmp_path / "inputs.npz")!r}))
        out = loaded.serve({{k: tf.constant(v) for k, v in x.items()}})
        out = {{k: v.numpy() for k, v in out.items()}}
        np.savez({str(tmp_path / "out.npz")!r}, **out)
        assert "albert_keras" not in sys.modules
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    served = np.load(tmp_path / "out.npz")
    for key in ("sequence_output", "pooled_output"):
        assert max_abs_diff(served[key], expected[key]) < 1e-5


def test_dict_inputs_are_matched_by_name_not_position():
    backbone = AlbertBackbone(AlbertConfig(**TINY))
    x = random_inputs(batch=2, length=8, vocab=80)
    expected = backbone(x)["sequence_output"]
    # An extra key that sorts first must not shift the others.
    with_extra = dict(x, aaa_extra=np.zeros((2, 3), "int32"))
    assert max_abs_diff(backbone(with_extra)["sequence_output"], expected) == 0.0
    with pytest.raises(ValueError, match='input "padding_mask"'):
        backbone({k: v for k, v in x.items() if k != "padding_mask"})


def test_python_lists_are_one_input_each():
    # Keras flattened them: "expects 3 named input(s) ... received 24 input
    # tensors. Pass inputs as a dict", for a dict.
    from albert_keras import AlbertClassifier, AlbertSquadV2

    backbone = AlbertBackbone(AlbertConfig(**TINY))
    x = random_inputs(batch=2, length=8, vocab=80)
    lists = {k: np.asarray(v).tolist() for k, v in x.items()}
    assert (
        max_abs_diff(backbone(lists)["pooled_output"], backbone(x)["pooled_output"])
        == 0
    )
    classifier = AlbertClassifier(backbone, 3)
    assert max_abs_diff(classifier(lists)["logits"], classifier(x)["logits"]) == 0
    reader = AlbertSquadV2(backbone)
    p_mask = [[0] * 8, [0] * 8]
    got = reader(dict(lists, p_mask=p_mask))["start_log_probs"]
    want = reader(dict(x, p_mask=np.zeros((2, 8), "int32")))["start_log_probs"]
    assert max_abs_diff(got, want) == 0
