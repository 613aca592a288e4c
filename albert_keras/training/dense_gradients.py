"""`DenseGradients`: an optimizer mixin summing a lookup's gradient rows."""

from __future__ import annotations


class DenseGradients:
    """Makes TensorFlow's `IndexedSlices` gradients dense before the update.

    On TensorFlow an embedding lookup's gradient is a `tf.IndexedSlices`:
    one row per token looked up, a table row's index repeated for each of its
    uses (the segment table's row 0 for nearly every token). Keras 3's
    optimizers apply their element-wise ops to those rows as if each index
    came once: the second moment of Adam, AdamW and LAMB gets the sum of the
    rows' squares instead of the square of their sum, and global-norm
    clipping measures the same wrong sum. After three steps of one table row
    looked up twice, `keras.optimizers.Adam(0.1)` moves it by 0.424 instead
    of 0.300 (tests/training/test_dense_gradients.py). Made dense
    (`tf.convert_to_tensor` sums the repeated rows), the gradient is what the
    official TF1 optimizers and the other Keras backends (whose gradients are
    dense) update with.

    Put it before the Keras optimizer class:
    `class FastLamb(DenseGradients, keras.optimizers.Lamb)`.

    Example:
    >>> import keras
    >>> class Adam(DenseGradients, keras.optimizers.Adam):
    ...     pass
    >>> type(Adam(1e-3)).__mro__[1].__name__
    'DenseGradients'
    """

    def apply(self, grads, trainable_variables=None):
        return super().apply([_summed(g) for g in grads], trainable_variables)


def _summed(gradient):
    """A `tf.IndexedSlices` as a dense tensor (repeated rows summed); any
    other gradient as it is."""
    if type(gradient).__name__ != "IndexedSlices":
        return gradient
    import tensorflow as tf

    return tf.convert_to_tensor(gradient)
