"""`dynamic_masking`: fresh n-gram masks every epoch, inside `tf.data` (RoBERTa style).

Write the corpus once without masks (`create_pretraining_data(...,
masked_lm_prob=0)` keeps `input_ids` whole and records word starts in
`token_boundary`), then map each example to the official features with a new
mask at every pass, instead of expanding the corpus `dupe_factor` times on
disk. The masking is the same whole-word n-gram masking as the static data;
each example's generator is seeded from (seed, a running example counter), so
a run is reproducible.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_keras.pretraining.pretraining_data import mask_words


def _mask_one(ids, mask, boundary, seed, options):
    rng = np.random.default_rng([options["seed"], int(seed)])
    length = int(mask.sum())
    words = []
    for i in range(length):
        if ids[i] in (options["cls_id"], options["sep_id"]):
            continue
        if words and not boundary[i]:
            words[-1].append(i)
        else:
            words.append([i])
    output, positions, labels, _ = mask_words(
        words,
        [int(t) for t in ids[:length]],
        length,
        rng,
        masked_lm_prob=options["masked_lm_prob"],
        max_predictions=options["max_predictions_per_seq"],
        vocab_size=options["vocab_size"],
        mask_id=options["mask_id"],
        ngram=options["ngram"],
    )
    pad = options["max_predictions_per_seq"] - len(positions)
    masked = np.array(list(ids), "int32")
    masked[:length] = output
    weights = np.array([1.0] * len(positions) + [0.0] * pad, "float32")
    positions = np.array(positions + [0] * pad, "int32")
    labels = np.array(labels + [0] * pad, "int32")
    return masked, positions, labels, weights


def dynamic_masking(
    dataset: tf.data.Dataset,
    vocab_size: int,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    ngram: int = 3,
    seed: int = 0,
    mask_id: int = 4,
    cls_id: int = 2,
    sep_id: int = 3,
) -> tf.data.Dataset:
    """Maps unbatched unmasked examples to official features with fresh masks.

    Apply it after `repeat()`: the running index then differs at every pass,
    and so do the masks.

    Args:
        dataset: unbatched dicts with `input_ids`, `input_mask`, `segment_ids`,
            `token_boundary`, `next_sentence_labels` (int32), e.g. parsed from
            records written with `masked_lm_prob=0`.
        vocab_size: for the 10% random replacements.
        max_predictions_per_seq, masked_lm_prob, ngram: as the static data.
        seed: reproducibility; each example gets (seed, its running index).
        mask_id, cls_id, sep_id: special ids of the vocabulary.

    Example:
    >>> ds = dynamic_masking(unmasked_examples, vocab_size=30000)  # doctest: +SKIP
    """
    options = dict(
        vocab_size=vocab_size,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        ngram=ngram,
        seed=seed,
        mask_id=mask_id,
        cls_id=cls_id,
        sep_id=sep_id,
    )

    def apply(index, features):
        masked, positions, labels, weights = tf.numpy_function(
            lambda i, m, b, s: _mask_one(i, m, b, s, options),
            [
                features["input_ids"],
                features["input_mask"],
                features["token_boundary"],
                index,
            ],
            [tf.int32, tf.int32, tf.int32, tf.float32],
            stateful=False,
        )
        out = dict(features)
        out["input_ids"] = tf.ensure_shape(masked, features["input_ids"].shape)
        out["masked_lm_positions"] = tf.ensure_shape(
            positions, [max_predictions_per_seq]
        )
        out["masked_lm_ids"] = tf.ensure_shape(labels, [max_predictions_per_seq])
        out["masked_lm_weights"] = tf.ensure_shape(weights, [max_predictions_per_seq])
        return out

    return dataset.enumerate().map(apply, num_parallel_calls=tf.data.AUTOTUNE)
