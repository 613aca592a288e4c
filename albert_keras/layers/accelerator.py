"""Which device the Keras backend computes on, for choosing fast paths."""

import functools

import keras


@functools.cache
def _accelerator_for(backend):
    if backend == "jax":
        import jax

        return jax.default_backend() in ("gpu", "tpu", "cuda", "rocm")
    if backend == "torch":
        import torch

        return torch.cuda.is_available()
    return False


def fused_attention_is_faster():
    """Whether `keras.ops.dot_product_attention` beats the explicit graph.

    True on a GPU or TPU under JAX (cuDNN flash attention, the Splash
    kernel) or torch (SDPA). False on the CPU, where XLA runs the explicit
    graph faster, and on TensorFlow, whose `dot_product_attention` is the
    same explicit math.

    Example:
    >>> isinstance(fused_attention_is_faster(), bool)
    True
    """
    return _accelerator_for(keras.backend.backend())
