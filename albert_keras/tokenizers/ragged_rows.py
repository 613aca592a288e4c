"""`concat_rows`: ragged rows joined side by side, without a transpose."""

from __future__ import annotations

import tensorflow as tf


def concat_rows(parts):
    """`tf.concat(parts, axis=1)` for ragged (or dense) tensors of `n` rows.

    TensorFlow's ragged concatenation along the rows transposes an integer
    tensor, and in a traced function oneDNN then prints "oneDNN supports
    DT_INT32 only on platforms with AVX-512" as an error line on CPUs
    without AVX-512. Here the rows are gathered in order instead.

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
    parts = [p.with_row_splits_dtype(tf.int64) for p in parts]
    n = parts[0].nrows()
    k = tf.constant(len(parts), tf.int64)
    i = tf.range(k * n)
    rows = tf.gather(tf.concat(parts, axis=0), (i % k) * n + i // k)
    return tf.RaggedTensor.from_uniform_row_length(rows, k).merge_dims(1, 2)
