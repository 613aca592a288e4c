"""`SentenceOrderHead`: the SOP classifier on the pooled output."""

import keras
from keras import ops

from albert_keras.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="albert_keras")
class SentenceOrderHead(keras.layers.Layer):
    """The official `cls/seq_relationship` head: `pooled @ W^T + b`, 2 classes.

    Label 0 means the segments are in their original order, 1 swapped (the
    official SOP labels). The kernel is stored as the checkpoint holds it,
    [2, H], so conversion is a copy.

    Args:
        hidden_size: int. Width H of the pooled output.
        initializer_range: float. Stddev of the truncated-normal initializer.

    Example:
    >>> head = SentenceOrderHead(32)
    >>> tuple(head(keras.ops.ones((3, 32))).shape)
    (3, 2)
    """

    def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range

    def build(self, input_shape):
        self.output_weights = self.add_weight(
            shape=(2, self.hidden_size),
            initializer=HostTruncatedNormal(stddev=self.initializer_range),
            name="output_weights",
        )
        self.output_bias = self.add_weight(
            shape=(2,), initializer="zeros", name="output_bias"
        )
        self.built = True

    def call(self, pooled_output):
        return ops.matmul(pooled_output, ops.transpose(self.output_weights)) + (
            self.output_bias
        )

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (2,)

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_size": self.hidden_size,
            "initializer_range": self.initializer_range,
        }
