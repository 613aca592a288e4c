"""Pick a functional model's inputs out of a larger dict, by name."""

from __future__ import annotations


def select_inputs(model, inputs):
    """The entries of `inputs` that `model` takes, checked by name.

    Keras matches dict inputs of a functional model by position when the
    keys differ from the model's, which silently feeds, say, `mask_positions`
    as `padding_mask`. Task models pass their whole input dict to the
    backbone, and users pass feature dicts with extra keys; both go through
    here instead.
    """
    if not isinstance(inputs, dict) or not isinstance(model.input, dict):
        return inputs
    missing = [name for name in model.input if name not in inputs]
    if missing:
        raise ValueError(
            f"{model.__class__.__name__} is missing input(s) {missing}. It takes a "
            f"dict with keys {sorted(model.input)}. Received keys: {sorted(inputs)}"
        )
    return {name: inputs[name] for name in model.input}


def lists_as_arrays(inputs):
    """A dict's nested Python lists as NumPy arrays, one input each.

    Keras flattens lists into separate inputs, so `{"token_ids": [[2, 7, 3]],
    ...}` was "expects 3 named input(s) ... but it received 9 input tensors".

    Example:
    >>> lists_as_arrays({"token_ids": [[2, 7, 3]]})["token_ids"].shape
    (1, 3)
    """
    if not isinstance(inputs, dict):
        return inputs
    import numpy as np

    return {
        key: np.asarray(value) if isinstance(value, (list, tuple)) else value
        for key, value in inputs.items()
    }
