"""Tagging examples -> packed rows with a label on each word's tagged piece.

Each sentence is one row `[CLS] pieces [SEP]` (`AlbertPacker`, cut to
`sequence_length`); a word's tag goes on the piece `word_pieces` chooses,
with sample weight 1, every other position weight 0 (so the loss is the
mean over words, as transformers' -100 labels make it). Words past the cut
get no position (-1): they are counted in the report, and predicted as
nothing.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from albert_keras.tasks.task_datasets import (
    epoch_batches,
    length_grouped,
    trim_padding,
)
from albert_keras.tokenizers.albert_packer import AlbertPacker
from albert_keras.tokenizers.word_pieces import packed_positions, word_pieces

MODEL_KEYS = ("token_ids", "segment_ids", "padding_mask")
_CHUNK = 1024


def tagging_features(examples, tokenizer, sequence_length, report=None) -> dict:
    """Numpy rows of `examples` (dicts with `words`, `tags` (class indices or
    None) and `line`).

    Returns:
        dict: `MODEL_KEYS` int32 [N, sequence_length]; `labels` int32 and
        `weights` float32 [N, sequence_length] (weight 1 on each tagged
        word's piece); `positions` int32 [N, max words] (-1: no word, or
        cut off).
    """
    packer = AlbertPacker.for_tokenizer(tokenizer, sequence_length)
    parts = []
    for start in range(0, len(examples), _CHUNK):
        chunk = examples[start : start + _CHUNK]
        words = tf.ragged.constant([e["words"] for e in chunk], tf.string)
        pieces, positions = word_pieces(tokenizer, words)
        part = {k: v.numpy() for k, v in packer(pieces).items()}
        part["positions"] = packed_positions(positions, sequence_length)
        parts.append(part)
    width = max([p["positions"].bounding_shape()[1] for p in parts] + [1])
    features = {
        k: np.concatenate([p[k] for p in parts]).astype("int32") for k in MODEL_KEYS
    }
    features["positions"] = np.concatenate(
        [p["positions"].to_tensor(-1, shape=[None, width]).numpy() for p in parts]
    ).astype("int32")
    _add_labels(features, examples, sequence_length, report)
    return features


def _add_labels(features, examples, sequence_length, report):
    rows = len(examples)
    labels = np.zeros((rows, sequence_length), "int32")
    weights = np.zeros((rows, sequence_length), "float32")
    for i, example in enumerate(examples):
        count = len(example["words"])
        where = features["positions"][i, :count]
        if (where < 0).any() and report is not None:
            report.note(example["line"], f"cut to sequence_length={sequence_length}")
        if example["tags"] is not None:
            kept = where >= 0
            labels[i, where[kept]] = np.asarray(example["tags"])[kept]
            weights[i, where[kept]] = 1.0
    features["labels"], features["weights"] = labels, weights


def tagging_dataset(
    features,
    batch_size,
    training=False,
    seed=0,
    epochs=None,
    trim=True,
    group_by_length=False,
):
    """(features, labels, sample weights) batches of `tagging_features` rows.

    Batches are cut to their longest row, rounded up to `PAD_MULTIPLE`
    (`trim_padding`): the cut columns are padding, with no label weight,
    and the loss is the mean over the weighted words, so the training is
    the same on less work. `predict_logits` pads the logits of cut batches
    back to full length (`model.predict` cannot join them).

    Args:
        features: from `tagging_features`.
        batch_size: rows per batch.
        training, seed, epochs: see `task_datasets.epoch_batches`.
        trim: cut the padding (False: full-length batches).
        group_by_length: training batches of sentences of similar length
            (`task_datasets.length_grouped`).
    """
    inputs = {k: features[k] for k in MODEL_KEYS}
    dataset = tf.data.Dataset.from_tensor_slices(
        (inputs, features["labels"], features["weights"])
    )

    def batch(rows):
        if not (group_by_length and training):
            return rows.batch(batch_size)
        return length_grouped(rows, batch_size, _row_lengths)

    dataset = epoch_batches(dataset, batch, training, seed, epochs)
    if trim:
        dataset = dataset.map(_trimmed, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _row_lengths(inputs, labels, weights):
    return tf.reduce_sum(inputs["padding_mask"], axis=-1)


def _trimmed(inputs, labels, weights):
    """A batch cut to its longest row (its labels and weights too)."""
    cut = trim_padding({**inputs, "labels": labels, "weights": weights})
    return {k: cut[k] for k in MODEL_KEYS}, cut["labels"], cut["weights"]


def predict_logits(model, dataset, sequence_length) -> np.ndarray:
    """`model`'s logits [N, sequence_length, classes] over the batches of
    `tagging_dataset`, each batch's padded back to `sequence_length` columns
    (zeros, at padding positions: `word_logits` reads word positions only).

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertTokenClassifier
    >>> model = AlbertTokenClassifier(AlbertBackbone("albert_tiny"), 3)
    >>> features = {"token_ids": np.ones((3, 64), "int32"),
    ...     "segment_ids": np.zeros((3, 64), "int32"),
    ...     "padding_mask": (np.arange(64) < 5)[None].repeat(3, 0).astype("int32"),
    ...     "labels": np.zeros((3, 64), "int32"), "weights": np.zeros((3, 64))}
    >>> predict_logits(model, tagging_dataset(features, 2), 64).shape
    (3, 64, 3)
    """
    parts = []
    for inputs, *_ in dataset:
        logits = model.predict_on_batch(inputs)["logits"]
        logits = np.asarray(keras.ops.convert_to_numpy(logits), "float32")
        cut = sequence_length - logits.shape[1]
        parts.append(np.pad(logits, ((0, 0), (0, cut), (0, 0))))
    if not parts:
        return np.zeros((0, sequence_length, 0), "float32")
    return np.concatenate(parts)


def word_logits(logits, positions, counts) -> list[np.ndarray]:
    """Per sentence, the logits of each word's tagged piece ([words, classes];
    NaN rows for words cut off).

    Args:
        logits: [N, sequence_length, classes] of the model.
        positions: `tagging_features`' `positions`.
        counts: words per sentence.
    """
    logits = np.asarray(logits, "float64")
    result = []
    for row, where, count in zip(logits, positions, counts, strict=True):
        where = where[:count]
        picked = row[np.maximum(where, 0)]
        picked[where < 0] = np.nan
        result.append(picked)
    return result
