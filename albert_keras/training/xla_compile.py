"""`xla_jit_compile`: the `jit_compile` that `model.compile` gets on this backend."""

import keras


def xla_jit_compile(requested: bool) -> bool:
    """Keras's `jit_compile` for a run that asked for XLA (`requested`).

    XLA on TensorFlow and JAX. On torch, Keras's `jit_compile=True` is
    `torch.compile`: on a 2-core CPU an ALBERT-tiny fine-tuning step took 6
    minutes to compile (204 s per step over the first two steps), so torch
    runs eagerly.

    Args:
        requested: whether the run wants compiled steps (`--no-jit` says no).

    Example:
    >>> xla_jit_compile(False)
    False
    """
    return bool(requested) and keras.backend.backend() != "torch"
