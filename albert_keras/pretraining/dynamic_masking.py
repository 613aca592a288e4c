"""`dynamic_masking`: fresh n-gram masks at every pass, in `tf.data` (RoBERTa style).

Write the corpus once unmasked (`create_pretraining_data(...,
masked_lm_prob=0)`: whole `input_ids` plus the official `token_boundary`
feature that marks word starts; the official script writes the same with
`--masked_lm_prob=0`) and draw new whole-word n-gram masks every time an
example is read, instead of expanding the corpus `dupe_factor` times on
disk. The masking is `NgramMasker`, the same as the static data; each element
gets its own generator seeded with (seed, its running index), so a run is
reproducible, and after `repeat()` every pass gets new masks.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_keras.pretraining.ngram_masker import NgramMasker


def dynamic_masking(
    dataset: tf.data.Dataset,
    vocabulary_size: int,
    *,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    ngram: int = 3,
    do_whole_word_mask: bool = True,
    seed: int = 0,
    mask_id: int = 4,
    cls_id: int = 2,
    sep_id: int = 3,
) -> tf.data.Dataset:
    """Maps unmasked examples (or batches) to the official features with new masks.

    Apply it after `repeat()` (the running index, and so the masks, then
    differ at every pass) and preferably after `batch()` (one NumPy call per
    batch).

    Args:
        dataset: dicts with `input_ids`, `input_mask` and `token_boundary`
            ([seq] or [batch, seq], integer), e.g. parsed unmasked records;
            other keys pass through.
        vocabulary_size: int. For the 10% random replacements.
        max_predictions_per_seq, masked_lm_prob, ngram, do_whole_word_mask:
            as for the static data.
        seed: int. Element i is masked with `default_rng([seed, i])`.
        mask_id, cls_id, sep_id: int. Special ids of the vocabulary.

    Returns: the dataset with `input_ids` masked and `masked_lm_positions`,
        `masked_lm_ids` (int32) and `masked_lm_weights` (float32) added.

    Example:
    >>> data = pretraining_dataset(  # doctest: +SKIP
    ...     "unmasked/*.tfrecord", 32, 128, 20, masked=False)
    >>> data = dynamic_masking(data.repeat(), vocabulary_size=30000)  # doctest: +SKIP
    """
    masker = NgramMasker(
        vocabulary_size,
        masked_lm_prob=masked_lm_prob,
        max_predictions_per_seq=max_predictions_per_seq,
        ngram=ngram,
        do_whole_word_mask=do_whole_word_mask,
        mask_id=mask_id,
        cls_id=cls_id,
        sep_id=sep_id,
    )
    limit = max_predictions_per_seq

    def mask(ids, input_mask, boundary, index):
        single = ids.ndim == 1
        if single:
            ids, input_mask, boundary = ids[None], input_mask[None], boundary[None]
        rng = np.random.default_rng([seed, int(index)])
        out = masker.mask(ids, input_mask.sum(axis=1), rng, boundary=boundary)
        values = [
            out["input_ids"].astype(ids.dtype),
            out["masked_lm_positions"],
            out["masked_lm_ids"],
            out["masked_lm_weights"],
        ]
        return [v[0] for v in values] if single else values

    def apply(index, features):
        ids = features["input_ids"]
        masked, positions, labels, weights = tf.numpy_function(
            mask,
            [ids, features["input_mask"], features["token_boundary"], index],
            [ids.dtype, tf.int32, tf.int32, tf.float32],
            stateful=False,
        )
        predictions = ids.shape[:-1].concatenate([limit])
        out = dict(features)
        out["input_ids"] = tf.ensure_shape(masked, ids.shape)
        out["masked_lm_positions"] = tf.ensure_shape(positions, predictions)
        out["masked_lm_ids"] = tf.ensure_shape(labels, predictions)
        out["masked_lm_weights"] = tf.ensure_shape(weights, predictions)
        return out

    return dataset.enumerate().map(
        apply, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
    )
