"""`take_positions`: rows of a sequence at given positions, gradient in float32."""

import keras
from keras import ops


def take_positions(sequence, positions):
    """`sequence[b, positions[b, i]]` for each batch row `b`: [batch, P, H].

    A gather's gradient is a scatter-add; for a bfloat16 or float16 sequence
    the rows are gathered from a float32 copy, so that scatter-add runs in
    float32 (16-bit scatter-adds are the suspected cause of a 17x slower
    bfloat16 training step on an H200). The values are the same: the casts
    there and back are exact.

    Args:
        sequence: tensor [batch, length, H].
        positions: int tensor [batch, P].

    Example:
    >>> import numpy as np
    >>> x = np.arange(12, dtype="float32").reshape(1, 4, 3)
    >>> ops.convert_to_numpy(take_positions(x, np.array([[3, 0]]))).tolist()
    [[[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]]
    """
    dtype = keras.backend.standardize_dtype(sequence.dtype)
    if dtype in ("bfloat16", "float16"):
        return ops.cast(_take_rows(ops.cast(sequence, "float32"), positions), dtype)
    return _take_rows(sequence, positions)


def _take_rows(sequence, positions):
    """The official `gather_indexes`: one gather of rows from the flattened
    batch. (`ops.take_along_axis` broadcasts the index to [batch, P, H] and,
    on TensorFlow, transposes it: in a traced function oneDNN then prints an
    error line on CPUs without AVX-512.)"""
    batch, length, width = ops.shape(sequence)
    offsets = ops.arange(batch, dtype="int32")[:, None] * length
    index = ops.reshape(ops.cast(positions, "int32") + offsets, [-1])
    rows = ops.take(ops.reshape(sequence, [-1, width]), index, axis=0)
    return ops.reshape(rows, [batch, -1, width])
