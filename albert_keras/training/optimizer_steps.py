"""`optimizer_updates`, `batches_per_update`: the step under gradient accumulation."""

from __future__ import annotations

import keras


def batches_per_update(optimizer) -> int:
    """The batches averaged into one update: Keras' `gradient_accumulation_steps`
    (None when off), 1 without accumulation.

    Example:
    >>> batches_per_update(keras.optimizers.SGD(gradient_accumulation_steps=4))
    4
    """
    return int(getattr(optimizer, "gradient_accumulation_steps", None) or 1)


def optimizer_updates(optimizer) -> int:
    """The updates the optimizer has applied: the global step.

    Keras' `iterations` counts batches, divided by `gradient_accumulation_steps`
    under accumulation (an array then, on every backend: read it through
    `keras.ops`).

    Example:
    >>> optimizer_updates(keras.optimizers.SGD())
    0
    """
    return int(keras.ops.convert_to_numpy(optimizer.iterations))
