"""Packing as the official run_classifier, and models that take raw strings."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertPacker, AlbertTextModel, AlbertTokenizer


def official_pack(a, b, length):
    """run_classifier.convert_single_example's packing, with _truncate_seq_pair."""
    a, b = list(a), (list(b) if b is not None else None)
    if b is None:
        a = a[: length - 2]
        tokens, segments = [2] + a + [3], [0] * (len(a) + 2)
    else:
        while len(a) + len(b) > length - 3:
            (a if len(a) > len(b) else b).pop()
        tokens = [2] + a + [3] + b + [3]
        segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    pad = length - len(tokens)
    return tokens + [0] * pad, segments + [0] * pad, [1] * len(tokens) + [0] * pad


@pytest.mark.parametrize("length", [5, 8, 16, 40])
def test_packing_matches_the_official_code(length):
    rng = np.random.default_rng(length)
    a = [list(rng.integers(5, 100, rng.integers(0, 30))) for _ in range(50)]
    b = [list(rng.integers(5, 100, rng.integers(0, 30))) for _ in range(50)]
    packer = AlbertPacker(length)
    for pair in (False, True):
        out = packer(
            tf.ragged.constant(a, tf.int32),
            tf.ragged.constant(b, tf.int32) if pair else None,
        )
        for i in range(50):
            tokens, segments, mask = official_pack(a[i], b[i] if pair else None, length)
            assert out["token_ids"].numpy()[i].tolist() == tokens
            assert out["segment_ids"].numpy()[i].tolist() == segments
            assert out["padding_mask"].numpy()[i].tolist() == mask


@pytest.fixture(scope="module")
def text_model():
    classifier = AlbertClassifier(
        AlbertBackbone(micro_config(vocab_size=8000, max_position_embeddings=32)),
        num_classes=2,
    )
    return AlbertTextModel(
        classifier, AlbertTokenizer(SPM_MODEL_PATH), sequence_length=32
    )


TEXTS = ["A fine, witty film.", "Dull and far too long" * 30, ""]


def test_strings_in_predictions_out(text_model):
    tokenizer, packer = text_model.tokenizer, text_model.packer
    expected = text_model.task_model(packer(tokenizer(TEXTS)))["logits"]
    got = text_model.predict(tf.constant(TEXTS), verbose=0)["logits"]
    assert max_abs_diff(got, expected) < 1e-6
    pairs = text_model((tf.constant(TEXTS), tf.constant(TEXTS[::-1])))["logits"]
    manual = text_model.task_model(packer(tokenizer(TEXTS), tokenizer(TEXTS[::-1])))[
        "logits"
    ]
    assert max_abs_diff(pairs, manual) < 1e-6


def test_keras_file_carries_the_vocabulary(text_model, tmp_path):
    path = str(tmp_path / "text.keras")
    text_model.save(path)
    restored = keras.saving.load_model(path)
    a = restored(tf.constant(TEXTS))["logits"]
    assert max_abs_diff(a, text_model(tf.constant(TEXTS))["logits"]) < 1e-6


def test_saved_model_serves_raw_strings_without_albert_keras(text_model, tmp_path):
    path = str(tmp_path / "serving")
    text_model.export_serving(path)
    expected = text_model(tf.constant(TEXTS))["logits"].numpy()
    expected_pairs = text_model((tf.constant(TEXTS), tf.constant(TEXTS)))[
        "logits"
    ].numpy()
    script = textwrap.dedent(
        """
        import sys, numpy as np, tensorflow as tf
        import tensorflow_text  # registers the SentencePiece ops
        loaded = tf.saved_model.load(sys.argv[1])
        texts = tf.constant(sys.argv[3:])
        out = loaded.serve(texts)["logits"].numpy()
        pairs = loaded.serve_pairs(texts, texts)["logits"].numpy()
        np.savez(sys.argv[2], out=out, pairs=pairs)
        assert "albert_keras" not in sys.modules
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run(
        [sys.executable, "-c", script, path, str(tmp_path / "o.npz"), *TEXTS],
        check=True,
        env=env,
    )
    served = np.load(tmp_path / "o.npz")
    assert max_abs_diff(served["out"], expected) < 1e-5
    assert max_abs_diff(served["pairs"], expected_pairs) < 1e-5
