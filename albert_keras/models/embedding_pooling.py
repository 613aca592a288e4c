"""`pool` and `normalized`: one vector per text from a backbone's outputs."""

from __future__ import annotations

from keras import ops

POOLINGS = ("mean", "max", "cls", "pooled")


def check_pooling(pooling) -> None:
    """ValueError naming `POOLINGS` where `pooling` is not one of them."""
    if pooling not in POOLINGS:
        raise ValueError(
            f"`pooling` must be one of {', '.join(POOLINGS)}. Received: "
            f"pooling={pooling!r}"
        )


def pool(outputs, padding_mask, pooling):
    """One float32 vector per row of a backbone's `outputs`.

    Args:
        outputs: the backbone's dict (`sequence_output` [batch, length, H],
            `pooled_output` [batch, H]).
        padding_mask: [batch, length], 1 on real tokens.
        pooling: one of `POOLINGS`.

    Example:
    >>> import numpy as np
    >>> seq = np.array([[[1.0], [3.0], [50.0]]], "float32")
    >>> out = {"sequence_output": seq, "pooled_output": seq[:, 0]}
    >>> [float(pool(out, np.array([[1, 1, 0]]), p)[0, 0]) for p in POOLINGS]
    [2.0, 3.0, 1.0, 1.0]
    """
    if pooling == "pooled":
        return ops.cast(outputs["pooled_output"], "float32")
    sequence = ops.cast(outputs["sequence_output"], "float32")
    if pooling == "cls":
        return sequence[:, 0]
    mask = ops.expand_dims(ops.cast(padding_mask, "float32"), -1)
    if pooling == "max":
        # Every row holds [CLS], so a real token always wins over -inf.
        return ops.max(ops.where(mask > 0, sequence, float("-inf")), axis=1)
    total = ops.sum(sequence * mask, axis=1)
    return total / ops.maximum(ops.sum(mask, axis=1), 1.0)


def normalized(vectors):
    """`vectors` [..., dim] scaled to unit L2 norm (zero vectors stay zero).

    Example:
    >>> import numpy as np
    >>> [round(float(v), 4) for v in normalized(np.array([[3.0, 4.0]]))[0]]
    [0.6, 0.8]
    """
    norm = ops.sqrt(ops.sum(ops.square(vectors), axis=-1, keepdims=True))
    return vectors / ops.maximum(norm, 1e-12)
