"""`concat_rows`: ragged rows joined side by side, without a transpose."""

from __future__ import annotations

import tensorflow as tf


def concat_rows(parts):
    """`tf.concat(parts, axis=1)` for ragged (or dense) tensors of `n` rows.

    TensorFlow's ragged concatenation along the rows transposes an integer
    tensor, and in a traced function oneDNN then prints "oneDNN supports
    DT_INT32 only on platforms with AVX-512" as an error line on CPUs
    without AVX-512. Here each value is scattered to its place instead.

    Args:
        parts: ragged or dense tensors, each [n, ...], of one dtype.

    Returns:
        ragged [n, None] with int64 row splits: row i is the rows i of
        `parts`, one after another.

    Example:
    >>> rows = concat_rows([tf.ragged.constant([[1, 2], []]), tf.constant([[9], [9]])])
    >>> rows.to_list()
    [[1, 2, 9], [9]]
    """
    parts = [
        tf.RaggedTensor.from_tensor(p) if isinstance(p, tf.Tensor) else p for p in parts
    ]
    lengths = [p.row_lengths() for p in parts]
    lengths = [tf.cast(n, tf.int64) for n in lengths]
    total = tf.add_n(lengths) if len(lengths) > 1 else lengths[0]
    start = tf.cumsum(total, exclusive=True)  # of each joined row
    places, values = [], []
    for part, n in zip(parts, lengths, strict=True):
        # Each value goes to its row's start, after the earlier parts' values.
        offsets = tf.cast(tf.ragged.range(n).flat_values, tf.int64)
        places.append(tf.repeat(start, n) + offsets)
        values.append(part.flat_values)
        start = start + n
    flat = tf.scatter_nd(
        tf.concat(places, axis=0)[:, None],
        tf.concat(values, axis=0),
        tf.reduce_sum(total)[None],
    )
    return tf.RaggedTensor.from_row_lengths(flat, total, validate=False)
