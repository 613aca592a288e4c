"""`pretraining_dataset`: official pretraining TFRecords -> batched feature dicts.

Parses with the official `run_pretraining.input_fn_builder` feature spec
(`feature_spec`) and casts int64 to int32 as its `_decode_record` does, so the
batches are what the official model function receives; map them with
`AlbertPretrainer.features_to_xy` for `fit`. Reads files written by the
official `create_pretraining_data.py` or by `create_pretraining_data`.
"""

from __future__ import annotations

import tensorflow as tf

from albert_keras.pretraining.record_lengths import record_files


def feature_spec(
    max_seq_length: int, max_predictions_per_seq: int, masked: bool = True
) -> dict:
    """The official `input_fn_builder` spec (`name_to_features`).

    With `masked=False`, the spec the official code uses with
    `masked_lm_budget` (masks drawn later): `token_boundary` instead of the
    three `masked_lm_*` features.
    """
    spec = {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }
    if masked:
        spec["masked_lm_positions"] = tf.io.FixedLenFeature(
            [max_predictions_per_seq], tf.int64
        )
        spec["masked_lm_ids"] = tf.io.FixedLenFeature(
            [max_predictions_per_seq], tf.int64
        )
        spec["masked_lm_weights"] = tf.io.FixedLenFeature(
            [max_predictions_per_seq], tf.float32
        )
    else:
        spec["token_boundary"] = tf.io.FixedLenFeature([max_seq_length], tf.int64)
    return spec


def pretraining_dataset(
    file_pattern,
    batch_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    *,
    training: bool = True,
    shuffle: bool | None = None,
    seed: int = 0,
    shuffle_buffer: int = 10000,
    masked: bool = True,
    dynamic_masking: bool = False,
    vocab_size: int | None = None,
    masked_lm_prob: float = 0.15,
    ngram: int = 3,
) -> tf.data.Dataset:
    """Batches of official features (int32 ints, float32 weights) from TFRecords.

    Training datasets repeat, shuffle files and records with a fixed seed (so
    a resumed run can `skip` the batches it has seen) and drop the last
    partial batch; evaluation datasets (`training=False`) read once, in order.

    Args:
        file_pattern: a glob or a list of globs of TFRecord files.
        batch_size: int. Global batch size.
        max_seq_length, max_predictions_per_seq: int. The lengths the files
            were written with.
        training: bool. Repeat, shuffle, drop the remainder.
        shuffle: bool. Shuffle files and records (default: `training`).
        seed: int. Shuffling and dynamic masking seed.
        shuffle_buffer: int. Records in the shuffle buffer.
        masked: bool. False reads unmasked records (`masked_lm_prob=0`) with
            their `token_boundary` and no `masked_lm_*` features.
        dynamic_masking: bool. Unmasked files: draw fresh n-gram masks at
            every pass (`dynamic_masking`); needs `vocab_size`.
        vocab_size, masked_lm_prob, ngram: int, float, int. For dynamic
            masking.

    Returns: a `tf.data.Dataset` of dicts: `input_ids`, `input_mask`,
        `segment_ids` [batch, max_seq_length], `masked_lm_positions`,
        `masked_lm_ids`, `masked_lm_weights` [batch, max_predictions_per_seq],
        `next_sentence_labels` [batch, 1].

    Example:
    >>> data = pretraining_dataset("data/*.tfrecord", 32, 128, 20)  # doctest: +SKIP
    >>> data = data.map(AlbertPretrainer.features_to_xy)  # doctest: +SKIP
    """
    patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
    files = sorted(f for p in patterns for f in record_files(p))
    if not files:
        raise ValueError(
            f"No pretraining records match {file_pattern!r}. Write them with "
            "`albert-keras create-data`."
        )
    if dynamic_masking and vocab_size is None:
        raise ValueError("`dynamic_masking=True` needs `vocab_size` (random ids).")
    shuffle = training if shuffle is None else shuffle
    spec = feature_spec(
        max_seq_length, max_predictions_per_seq, masked and not dynamic_masking
    )

    def parse(records):
        example = tf.io.parse_example(records, spec)
        return {
            k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v
            for k, v in example.items()
        }

    if shuffle:
        data = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=seed)
        if training:
            data = data.repeat()
        data = data.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(4, len(files)),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        data = data.shuffle(shuffle_buffer, seed=seed)
    else:  # the files one after the other, as the official evaluation input
        data = tf.data.TFRecordDataset(files)
        if training:
            data = data.repeat()
    data = data.batch(batch_size, drop_remainder=training)
    data = data.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if dynamic_masking:
        from albert_keras.pretraining.dynamic_masking import dynamic_masking as mask

        # After `repeat` and `batch`: new masks at every pass, one call a batch.
        data = mask(
            data,
            vocab_size,
            max_predictions_per_seq=max_predictions_per_seq,
            masked_lm_prob=masked_lm_prob,
            ngram=ngram,
            seed=seed,
        ).map(lambda f: {k: v for k, v in f.items() if k != "token_boundary"})
    return data.prefetch(tf.data.AUTOTUNE)
