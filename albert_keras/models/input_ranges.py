"""`check_input_ranges`: NumPy inputs whose ids the model's tables do not hold."""

from __future__ import annotations

import numpy as np

_FIX = {
    "token_ids": "tokenize with the model's own vocabulary (its preset's tokenizer)",
    "segment_ids": "use 0 for the first text and 1 for the second",
    "mask_positions": "give positions inside the sequence, from 0 to its length - 1",
    "start_positions": "give positions inside the sequence, from 0 to its length - 1",
}


def _limits(model, inputs):
    """(name, the largest valid value + 1, what that bound is) per input."""
    config = getattr(getattr(model, "backbone", model), "config", None)
    limits = []
    if config is not None:
        limits.append(("token_ids", config.vocab_size, "the vocabulary size"))
        limits.append(("segment_ids", config.type_vocab_size, "type_vocab_size"))
    token_ids = inputs.get("token_ids")
    if isinstance(token_ids, np.ndarray) and token_ids.ndim >= 2:
        for name in ("mask_positions", "start_positions"):
            limits.append((name, token_ids.shape[-1], "the sequence length"))
    return limits


def check_input_ranges(model, inputs):
    """Raise a clear `ValueError` for an id outside the table it indexes.

    Only NumPy arrays are checked (Python lists arrive as NumPy arrays), so a
    traced or on-device tensor costs nothing. Without the check TensorFlow
    fails with a raw gather error, while JAX quietly clamps an id that is too
    large, and both backends wrap a negative `mask_positions` around like
    NumPy (-1 is the last token). Either way the outputs would be garbage.

    Args:
        model: an `AlbertBackbone`, or a task model with a `backbone`.
        inputs: the model's input dict, or anything else (left alone).

    Example:
    >>> import numpy as np
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone("albert_tiny")
    >>> ids = {"token_ids": np.array([[2, 5000, 3]])}
    >>> try:
    ...     check_input_ranges(backbone, ids)
    ... except ValueError as error:
    ...     print(str(error).split(":")[0])
    token_ids holds 5000 at [0, 1]
    """
    if not isinstance(inputs, dict):
        return
    for name, bound, what in _limits(model, inputs):
        value = inputs.get(name)
        if not isinstance(value, np.ndarray) or value.size == 0:
            continue
        if value.dtype.kind not in "iu":
            continue
        bad = np.argwhere((value < 0) | (value >= bound))
        if len(bad):
            where = tuple(int(i) for i in bad[0])
            raise ValueError(
                f"{name} holds {value[where]} at {list(where)}: it must be from 0 "
                f"to {bound - 1} ({what} is {bound}). Fix: {_FIX[name]}."
            )
