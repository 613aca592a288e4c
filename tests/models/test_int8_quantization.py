"""`model.quantize("int8")`: every model keeps its outputs, saves, loads, exports.

The weights are random with the spread of trained ALBERT kernels (std 0.05),
so attention is neither uniform nor one-hot. Tolerance: max abs diff of int8
vs float32 below 5% of the largest float32 output, or 0.01 for outputs near 0
(Keras's int8 `Dense` quantizes kernels per column and every input row on the
fly; measured here 0.4% to 2.6%, SOP logits 0.005).
"""

import gc
import os
import warnings
from unittest import mock

import keras
import numpy as np
import pytest
import tensorflow as tf
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
from albert_keras.layers.albert_attention import AlbertAttention
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer

# Four layers sharing one block: an error of the shared int8 kernels compounds.
CONFIG = micro_config(
    vocab_size=60,
    embedding_size=16,
    hidden_size=64,
    num_hidden_layers=4,
    num_attention_heads=4,
    intermediate_size=128,
    max_position_embeddings=32,
)
RELATIVE_TOLERANCE = 0.05
ABSOLUTE_FLOOR = 0.01  # for outputs near 0 (the SOP logits of random weights)


def tolerance(float_output):
    magnitude = np.abs(np.asarray(float_output))
    largest = float(np.max(magnitude[magnitude < 1e9]))  # not masked (-1e30) ones
    return max(RELATIVE_TOLERANCE * largest, ABSOLUTE_FLOOR)


@pytest.fixture(autouse=True)
def one_collection(monkeypatch):
    """Keras collects garbage after each float kernel `quantize` drops (0.4 s
    each in a test process): not what these tests measure."""
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)


def build(kind, config=CONFIG):
    backbone = AlbertBackbone(config)
    x = random_inputs(batch=2, length=12, vocab=60)
    if kind == "backbone":
        return backbone, x
    if kind == "pretrainer":
        positions = np.array([[1, 2], [3, 4]], "int32")
        return AlbertPretrainer(backbone), dict(x, mask_positions=positions)
    if kind == "classifier":
        return AlbertClassifier(backbone, num_classes=3), x
    if kind == "span_qa":
        return AlbertSpanQA(backbone), x
    if kind == "squad_v2":
        p_mask = np.zeros((2, 12), "int32")
        p_mask[:, 1:3] = 1
        model = AlbertSquadV2(backbone, start_n_top=2, end_n_top=2)
        return model, dict(x, p_mask=p_mask, start_positions=np.array([4, 5], "int32"))
    model = AlbertMultipleChoice(backbone, num_choices=2)
    return model, {k: np.stack([v, v[::-1]], axis=1) for k, v in x.items()}


def float_outputs(tree):
    return {
        k: np.asarray(v)
        for k, v in tree.items()
        if np.issubdtype(np.asarray(v).dtype, np.floating)
    }


def quantize_and_compare(kind):
    """The model, its inputs and its int8 outputs, checked against float32."""
    model, x = build(kind)
    randomize(model, seed=5, scale=0.05)
    expected = float_outputs(model(x, training=False))
    calls = []
    with (
        mock.patch.object(gc, "collect", lambda gen=2: calls.append(gen) or 0),
        warnings.catch_warnings(record=True) as warned,
    ):
        warnings.simplefilter("always")
        model.quantize("int8")
    # One collection at the end, not Keras's one per float kernel dropped; no
    # warning for each LayerNorm or dropout that has nothing to quantize.
    assert calls == [2]
    assert not [w for w in warned if "quantize" in str(w.message)]
    backbone = model if kind == "backbone" else model.backbone
    assert backbone.get_layer("encoder").block(0).attention.query.kernel.dtype == "int8"
    quantized = float_outputs(model(x, training=False))
    for key, value in expected.items():
        diff = max_abs_diff(quantized[key], value)
        assert 0 < diff < tolerance(value), (key, diff, tolerance(value))
    return model, x, quantized


@pytest.mark.parametrize(
    "kind",
    ["backbone", "pretrainer", "classifier", "span_qa", "squad_v2", "multiple_choice"],
)
def test_int8_is_close_to_float32_and_saves(kind, tmp_path):
    model, x, quantized = quantize_and_compare(kind)
    path = str(tmp_path / "int8.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    again = float_outputs(restored(x, training=False))
    for key, value in quantized.items():
        assert max_abs_diff(again[key], value) == 0.0, key


def test_fused_int8_projection_equals_one_call_per_kernel():
    layer = AlbertAttention(64, 4)
    x = keras.random.normal((2, 12, 64), seed=1)
    mask = keras.ops.ones((2, 12), "int32")
    layer(x, mask)
    randomize(layer, seed=2, scale=0.05)
    for dense in (layer.query, layer.key, layer.value, layer.output_dense):
        dense.quantize("int8")
    fused = layer(x, mask, training=False)  # one int8 [H, 3H] product
    separate = layer(x, mask, training=True)  # no dropout: 3 int8 Dense calls
    assert max_abs_diff(fused, separate) < 1e-5


def test_int8_text_model_exports_a_text_in_saved_model(tmp_path):
    # The vocabulary of the SentencePiece model (8000 pieces).
    classifier, _ = build("classifier", CONFIG.replace(vocab_size=8000))
    randomize(classifier, seed=5, scale=0.05)
    model = with_tokenizer(classifier, AlbertTokenizer(SPM_MODEL_PATH), 16)
    texts = ["A fine, witty film.", "Dull and long, so long."]
    expected = model(texts)["logits"]
    model.quantize("int8")
    quantized = model(texts)["logits"]
    diff = max_abs_diff(quantized, expected)
    assert 0 < diff < tolerance(expected), diff

    model.save(str(tmp_path / "text.keras"))
    restored = keras.saving.load_model(str(tmp_path / "text.keras"))
    assert max_abs_diff(restored(texts)["logits"], quantized) == 0
    restored.export(str(tmp_path / "sm"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "sm"))  # kept: it owns the weights
    served = loaded.serve(tf.constant(texts))
    assert max_abs_diff(served["logits"], quantized) < 1e-5
    assert os.path.isdir(tmp_path / "sm" / "variables")


@pytest.mark.parametrize("kind", ["span_qa", "multiple_choice"])
def test_int8_span_and_choice_text_models_save_and_load(kind, tmp_path):
    # Quantized before any call: only the task model is, not the tokenizer.
    task_model, _ = build(kind, CONFIG.replace(vocab_size=8000))
    windows = dict(max_query_length=8, doc_stride=8) if kind == "span_qa" else {}
    model = with_tokenizer(task_model, AlbertTokenizer(SPM_MODEL_PATH), 32, **windows)
    model.quantize("int8")
    model.save(str(tmp_path / "text.keras"))
    restored = keras.saving.load_model(str(tmp_path / "text.keras"))
    assert type(restored) is type(model)
    pooler = restored.task_model.backbone.get_layer("pooler")
    assert pooler.quantization_mode == "int8"
