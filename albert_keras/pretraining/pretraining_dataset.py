"""`pretraining_dataset`: official pretraining TFRecords -> batched feature dicts."""

from __future__ import annotations

import tensorflow as tf


def feature_spec(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """The official `run_pretraining.input_fn_builder` feature spec."""
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature(
            [max_predictions_per_seq], tf.int64
        ),
        "masked_lm_ids": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature(
            [max_predictions_per_seq], tf.float32
        ),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def pretraining_dataset(
    file_pattern,
    batch_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    *,
    training: bool = True,
    seed: int = 0,
    shuffle_buffer: int = 10000,
    dynamic_masking: bool = False,
    vocab_size: int | None = None,
    masked_lm_prob: float = 0.15,
) -> tf.data.Dataset:
    """Batches of official features (int32), for `AlbertPretrainer.features_to_xy`.

    Training datasets repeat, shuffle files and records with a fixed seed (so
    a resumed run can skip the batches it has seen) and drop the last partial
    batch; evaluation datasets read once, in order.

    Args:
        file_pattern: a glob or list of globs of TFRecord files.
        batch_size: global batch size.
        max_seq_length, max_predictions_per_seq: the lengths the files hold.
        training: repeat and shuffle.
        seed: shuffling seed.
        shuffle_buffer: records in the shuffle buffer.
        dynamic_masking: the files were written unmasked (`masked_lm_prob=0`);
            draw fresh n-gram masks for every pass (needs `vocab_size`).
        vocab_size, masked_lm_prob: for dynamic masking.

    Example:
    >>> ds = pretraining_dataset("data/*.tfrecord", 32, 128, 20)  # doctest: +SKIP
    """
    patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
    files = sorted(f for p in patterns for f in tf.io.gfile.glob(p))
    if not files:
        raise ValueError(f"No pretraining records match {file_pattern!r}.")
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    if dynamic_masking:
        if vocab_size is None:
            raise ValueError(
                "dynamic_masking needs `vocab_size` (random replacements)."
            )
        spec["token_boundary"] = tf.io.FixedLenFeature([max_seq_length], tf.int64)
        for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
            spec.pop(name)

    def parse(record):
        example = tf.io.parse_single_example(record, spec)
        return {
            k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v
            for k, v in example.items()
        }

    data = tf.data.Dataset.from_tensor_slices(files)
    if training:
        data = data.shuffle(len(files), seed=seed).repeat()
        data = data.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(4, len(files)),
            deterministic=True,
        )
        data = data.shuffle(shuffle_buffer, seed=seed)
    else:
        data = tf.data.TFRecordDataset(data)
    data = data.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if dynamic_masking:
        from albert_keras.pretraining.dynamic_masking import dynamic_masking as mask

        # After `repeat`, so every pass over the data gets new masks.
        data = mask(
            data,
            vocab_size,
            max_predictions_per_seq=max_predictions_per_seq,
            masked_lm_prob=masked_lm_prob,
            seed=seed,
        ).map(lambda f: {k: v for k, v in f.items() if k != "token_boundary"})
    data = data.batch(batch_size, drop_remainder=training)
    return data.prefetch(tf.data.AUTOTUNE)
