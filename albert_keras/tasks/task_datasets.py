"""Packed `tf.data` pipelines for classification, regression, multiple choice
and sentence embeddings.

Texts are tokenized once, up front, with the in-graph tokenizer (so the
report can count what packing truncates); batches are packed in the
pipeline by `AlbertPacker` exactly as the official `run_classifier`.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_keras.tokenizers.albert_packer import AlbertPacker

_CHUNK = 2048
# Packed batches are cut to their longest row rounded up to this: a few
# shapes (XLA compiles one step per shape), at most 31 pad columns each.
PAD_MULTIPLE = 32
# `group_by_length`: rows are sorted by length within runs of this many
# batches of the shuffled stream (transformers' megabatches are 50; 8 keep
# nearly all the saving: 0.44 of the full-length work on movie reviews at
# length 128, 0.41 with 50, 0.71 without grouping).
GROUP_BATCHES = 8
# A bi-encoder's batches are cut finer: its texts are packed alone (short,
# often under 64 tokens), where 32 left up to 31 pad columns of 40 (a step
# took 1.9x as long as at length 40: docs/benchmarks.md, bi-encoder rows).
EMBEDDING_PAD_MULTIPLE = 8


def tokenize_texts(tokenizer, texts):
    """Token ids of each text, as a ragged int32 tensor [len(texts), None]."""
    values, lengths = [], []
    for start in range(0, len(texts), _CHUNK):
        ids = tokenizer(tf.constant(texts[start : start + _CHUNK]))
        values.append(ids.flat_values.numpy())
        lengths.append(ids.row_lengths().numpy())
    if not values:
        return tf.RaggedTensor.from_row_lengths(
            tf.zeros([0], tf.int32), tf.zeros([0], tf.int64)
        )
    return tf.RaggedTensor.from_row_lengths(
        np.concatenate(values).astype("int32"), np.concatenate(lengths)
    )


def _note_truncation(report, lines, lengths_a, lengths_b, sequence_length):
    """Counts each example (by its line) that packing cuts, once."""
    if report is None:
        return
    room = np.where(lengths_b > 0, sequence_length - 3, sequence_length - 2)
    for line in dict.fromkeys(np.asarray(lines)[lengths_a + lengths_b > room]):
        report.note(int(line), f"cut to sequence_length={sequence_length}")


def epoch_batches(dataset, batch, training=False, seed=0, epochs=None):
    """`batch(dataset)`, or for training the `epochs` back to back, each shuffled.

    Epoch `e` is shuffled with a seed made of `seed` and `e` alone, so a run
    resumed at epoch 3 sees the same order in epoch 3 as a run that never
    stopped (a `reshuffle_each_iteration` order would restart at epoch 0's).

    Args:
        dataset: one epoch of examples, in file order.
        batch: callable(dataset) -> dataset of batches.
        training: shuffle; else one epoch in order.
        seed: the run's seed.
        epochs: a `range` of epoch indices (default: `range(1)`).

    Example:
    >>> ds = tf.data.Dataset.range(4)
    >>> order = epoch_batches(ds, lambda d: d.batch(4), True, 0, range(2, 3))
    >>> [sorted(b.tolist()) for b in order.as_numpy_iterator()]
    [[0, 1, 2, 3]]
    """
    if not training:
        return batch(dataset)
    size = max(int(dataset.cardinality()), 1)
    stream = None
    for epoch in epochs or range(1):
        one = batch(dataset.shuffle(size, seed=seed * 1_000_003 + epoch))
        stream = one if stream is None else stream.concatenate(one)
    return stream if stream is not None else batch(dataset.take(0))


def trim_padding(features, multiple=PAD_MULTIPLE):
    """Packed features cut to their batch's longest row, rounded up to `multiple`.

    The cut columns are padding, which no real token attends to (and the
    official heads read `[CLS]` or masked positions only), so the model
    gives the same outputs on fewer columns.

    Args:
        features: dict of int32 [..., length] tensors with a `padding_mask`.
        multiple: the cut length is a multiple of this (or the full length).

    Example:
    >>> mask = tf.constant([[1] * 5 + [0] * 123])
    >>> trim_padding({"padding_mask": mask})["padding_mask"].shape
    TensorShape([1, 32])
    """
    mask = features["padding_mask"]
    longest = tf.reduce_max(tf.reduce_sum(mask, axis=-1))
    rounded = tf.maximum(-(-longest // multiple) * multiple, multiple)
    length = tf.minimum(rounded, tf.shape(mask)[-1])
    return {key: value[..., :length] for key, value in features.items()}


def length_grouped(dataset, batch_size, lengths):
    """Batches of rows of similar length: each run of `GROUP_BATCHES` batches
    of `dataset` is sorted by `lengths(*rows)`, longest first, then cut into
    batches (transformers' `group_by_length`). As many batches as
    `ragged_batch(batch_size)`.

    Args:
        dataset: elements of rows, ragged or dense, a dict of them too
            (already shuffled for training).
        batch_size: rows per batch.
        lengths: callable(*batched rows) -> int [rows]: each row's length.

    Example:
    >>> ids = tf.ragged.constant([[1], [1, 2, 3], [1, 2]])
    >>> ds = tf.data.Dataset.from_tensor_slices(ids)
    >>> grouped = length_grouped(ds, 2, lambda rows: rows.row_lengths())
    >>> [b.to_list() for b in grouped]
    [[[1, 2, 3], [1, 2]], [[1]]]
    """

    def longest_first(*rows):
        order = tf.argsort(lengths(*rows), direction="DESCENDING", stable=True)
        rows = tf.nest.map_structure(lambda row: tf.gather(row, order), rows)
        return rows if len(rows) > 1 else rows[0]

    chunks = dataset.ragged_batch(batch_size * GROUP_BATCHES).map(longest_first)
    return chunks.unbatch().ragged_batch(batch_size)


def _batches(batch_size, group_by_length, lengths):
    if group_by_length:
        return lambda d: length_grouped(d, batch_size, lengths)
    return lambda d: d.ragged_batch(batch_size)


def _packed_batches(rows, batch, pack, order):
    """`rows` (tensors sliced along axis 0) batched by `batch` in the epoch
    `order` (training, seed, epochs) of `epoch_batches`, each batch mapped
    by `pack`, prefetched."""
    dataset = epoch_batches(tf.data.Dataset.from_tensor_slices(rows), batch, *order)
    dataset = dataset.map(pack, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def text_dataset(
    examples,
    tokenizer,
    sequence_length,
    batch_size,
    training=False,
    seed=0,
    report=None,
    regression=False,
    epochs=None,
    group_by_length=False,
):
    """(features, label) batches of single texts or text pairs.

    Args:
        examples: dicts with `text_a`, `text_b` (or None) and `label`, as
            `read_task_file` returns them.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: packed length; longer texts are cut as the official
            `_truncate_seq_pair` does (counted in `report`).
        batch_size: examples per batch (the last batch may be smaller).
        training: shuffle every epoch (see `epoch_batches`).
        seed: shuffle seed.
        report: a `DataReport` to count truncations in, or None.
        regression: float32 labels instead of int32 class indices.
        epochs: training only: the epochs to produce, back to back (a
            `range`; default one).
        group_by_length: training only: batch texts of similar length
            together (see `length_grouped`): less padding, faster steps.

    Returns:
        A `tf.data.Dataset` of (`{"token_ids", "segment_ids", "padding_mask"}`,
        label) with int32 [batch, length] features: `length` is the batch's
        longest packed row rounded up to `PAD_MULTIPLE`, at most
        `sequence_length` (see `trim_padding`).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> examples = [{"text_a": "A fine film.", "text_b": None, "label": 1}]
    >>> ds = text_dataset(examples, AlbertTokenizer(SPM_MODEL_PATH), 16, 8)
    >>> features, labels = next(iter(ds))
    >>> features["token_ids"].shape, labels.numpy().tolist()
    (TensorShape([1, 16]), [1])
    """
    a = tokenize_texts(tokenizer, [e["text_a"] for e in examples])
    b = tokenize_texts(tokenizer, [e["text_b"] or "" for e in examples])
    lines = [e.get("line", i + 1) for i, e in enumerate(examples)]
    _note_truncation(
        report, lines, a.row_lengths().numpy(), b.row_lengths().numpy(), sequence_length
    )
    labels = np.asarray(
        [e["label"] for e in examples], "float32" if regression else "int32"
    )
    packer = AlbertPacker.for_tokenizer(tokenizer, sequence_length)
    dataset = tf.data.Dataset.from_tensor_slices((a, b, labels))
    batch = _batches(
        batch_size,
        group_by_length and training,
        lambda x, y, _: x.row_lengths() + y.row_lengths(),
    )
    dataset = epoch_batches(dataset, batch, training, seed, epochs)
    dataset = dataset.map(
        lambda x, y, label: (trim_padding(packer(x, y)), label),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    return dataset.prefetch(tf.data.AUTOTUNE)


def choice_dataset(
    examples,
    tokenizer,
    sequence_length,
    batch_size,
    training=False,
    seed=0,
    report=None,
    epochs=None,
    group_by_length=False,
):
    """(features, label) batches for multiple choice, [batch, choices, length].

    Each option is packed with its context as a pair, `[CLS] context [SEP]
    option [SEP]`, as the official RACE code packs passage and question +
    option; `_truncate_seq_pair` cuts the longer side.

    Args:
        examples: dicts with `context`, `options` and `label` (see
            `read_task_file`), all with the same number of options.
        tokenizer, sequence_length, batch_size, training, seed, report,
            epochs, group_by_length: as `text_dataset` (a row's length is
            its longest option's).

    Returns:
        A `tf.data.Dataset` of (features [batch, choices, length], int32
        label [batch]), `length` as `text_dataset`'s.
    """
    choices = len(examples[0]["options"])
    contexts = tokenize_texts(tokenizer, [e["context"] for e in examples])
    options = tokenize_texts(tokenizer, [o for e in examples for o in e["options"]])
    repeated = tf.gather(contexts, np.repeat(np.arange(len(examples)), choices))
    lines = [e.get("line", i + 1) for i, e in enumerate(examples)]
    _note_truncation(
        report,
        np.repeat(lines, choices),
        repeated.row_lengths().numpy(),
        options.row_lengths().numpy(),
        sequence_length,
    )
    a = tf.RaggedTensor.from_uniform_row_length(repeated, choices)
    b = tf.RaggedTensor.from_uniform_row_length(options, choices)
    labels = np.asarray([e["label"] for e in examples], "int32")
    packer = AlbertPacker.for_tokenizer(tokenizer, sequence_length)

    def pack(x, y, label):
        packed = packer(x.merge_dims(0, 1), y.merge_dims(0, 1))
        shape = [-1, choices, sequence_length]
        packed = {k: tf.reshape(v, shape) for k, v in packed.items()}
        return trim_padding(packed), label

    def longest_option(x, y, _):
        return tf.reduce_max(x.row_lengths(axis=2) + y.row_lengths(axis=2), axis=1)

    batch = _batches(batch_size, group_by_length and training, longest_option)
    return _packed_batches((a, b, labels), batch, pack, (training, seed, epochs))


def embedding_dataset(
    examples,
    tokenizer,
    sequence_length,
    batch_size,
    training=False,
    seed=0,
    report=None,
    epochs=None,
    group_by_length=False,
):
    """(features, ids) batches for a bi-encoder, [batch, texts, length].

    Each text is packed alone, `[CLS] text [SEP]` (cut to `sequence_length`
    and counted in `report`).

    Args:
        examples: dicts with `texts` (the same number each: anchor,
            positive, hard negatives) and `positive_id` (equal for equal
            positive texts: `InBatchNegativesLoss` leaves such duplicates
            out of each other's negatives).
        tokenizer, sequence_length, batch_size, training, seed, report,
            epochs, group_by_length: as `text_dataset` (a row's length is
            its longest text's).

    Returns:
        A `tf.data.Dataset` of (features [batch, texts, length], int32
        positive ids [batch]), `length` the batch's longest packed text
        rounded up to `EMBEDDING_PAD_MULTIPLE`, at most `sequence_length`.
    """
    count = len(examples[0]["texts"])
    flat = tokenize_texts(tokenizer, [t for e in examples for t in e["texts"]])
    lines = [e.get("line", i + 1) for i, e in enumerate(examples)]
    lengths = flat.row_lengths().numpy()
    _note_truncation(
        report, np.repeat(lines, count), lengths, 0 * lengths, sequence_length
    )
    texts = tf.RaggedTensor.from_uniform_row_length(flat, count)
    ids = np.asarray([e["positive_id"] for e in examples], "int32")
    packer = AlbertPacker.for_tokenizer(tokenizer, sequence_length)

    def pack(x, positive_ids):
        packed = packer(x.merge_dims(0, 1))
        shape = [-1, count, sequence_length]
        packed = {k: tf.reshape(v, shape) for k, v in packed.items()}
        return trim_padding(packed, EMBEDDING_PAD_MULTIPLE), positive_ids

    def longest_text(x, _):
        return tf.reduce_max(x.row_lengths(axis=2), axis=1)

    batch = _batches(batch_size, group_by_length and training, longest_text)
    return _packed_batches((texts, ids), batch, pack, (training, seed, epochs))
