"""ExampleEncoder: the bytes protobuf writes for the official writer's features."""

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.pretraining.example_encoder import ExampleEncoder

# The official `write_instance_to_example_files` order.
OFFICIAL_ORDER = (
    "input_ids",
    "input_mask",
    "segment_ids",
    "token_boundary",
    "masked_lm_positions",
    "masked_lm_ids",
    "masked_lm_weights",
    "next_sentence_labels",
)


def random_features(n=64, length=128, predictions=20, seed=0):
    rng = np.random.default_rng(seed)
    features = {
        "input_ids": rng.integers(0, 30000, (n, length)),
        "input_mask": rng.integers(0, 2, (n, length)),
        "segment_ids": rng.integers(0, 2, (n, length)),
        "token_boundary": rng.integers(0, 2, (n, length)),
        "masked_lm_positions": rng.integers(0, length, (n, predictions)),
        "masked_lm_ids": rng.integers(0, 30000, (n, predictions)),
        "masked_lm_weights": rng.random((n, predictions)).astype(np.float32),
        "next_sentence_labels": rng.integers(0, 2, n),
    }
    # Varint edge cases: every width up to 2**62.
    edges = [0, 1, 127, 128, 16383, 16384, 2**21, 2**28 - 1, 2**28, 2**35, 2**62]
    features["input_ids"][0, : len(edges)] = edges
    return features


def official_bytes(features, row):
    """What the official writer's `tf.train.Example` serializes to."""
    feature = {}
    for name in OFFICIAL_ORDER:
        values = np.atleast_1d(features[name][row]).tolist()
        if name == "masked_lm_weights":
            feature[name] = tf.train.Feature(
                float_list=tf.train.FloatList(value=values)
            )
        else:
            feature[name] = tf.train.Feature(
                int64_list=tf.train.Int64List(value=values)
            )
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    return example.SerializeToString(deterministic=True)


def test_bytes_equal_protobuf_serialization():
    features = random_features()
    records = ExampleEncoder().encode(features)
    assert len(records) == 64
    for row in range(64):
        assert records[row] == official_bytes(features, row), row


def test_fixed_width_rows_and_parsing():
    features = random_features(n=8, length=16, predictions=3, seed=1)
    features["input_ids"] = np.full((8, 16), 5)  # one byte per value
    features["next_sentence_labels"] = features["next_sentence_labels"][:, None]
    records = ExampleEncoder().encode(features)
    parsed = tf.io.parse_example(
        records,
        {
            "input_ids": tf.io.FixedLenFeature([16], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([3], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
        },
    )
    assert (parsed["input_ids"].numpy() == 5).all()
    np.testing.assert_array_equal(
        parsed["masked_lm_weights"].numpy(), features["masked_lm_weights"]
    )
    assert records[0] == official_bytes(features, 0)


def test_errors():
    features = random_features(n=2)
    features["input_ids"][0, 0] = -1
    with pytest.raises(ValueError, match="non-negative"):
        ExampleEncoder().encode(features)
    del features["token_boundary"]
    with pytest.raises(ValueError, match="token_boundary"):
        ExampleEncoder().encode(features)
