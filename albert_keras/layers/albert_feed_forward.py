"""`AlbertFeedForward`: the FFN sub-block with its residual and LayerNorm."""

import keras
from keras import ops

from albert_keras.layers.activations import get_activation
from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertFeedForward(keras.layers.Layer):
    """Feed-forward sub-block of an ALBERT layer (official `ffn_1` + `LayerNorm_1`).

    `LayerNorm(dropout(W2 act(W1 x + b1) + b2) + x)`, with the official
    activation names ("gelu" is the tanh approximation).

    Args:
        hidden_size: int. Width H.
        intermediate_size: int. Width of the inner layer.
        activation: str. "gelu" (tanh form, official), "gelu_new" (the same),
            "gelu_exact" (erf), "relu", "tanh" or "linear".
        dropout: float. Dropout on the output.
        initializer_range: float. Stddev of the truncated-normal initializer.

    Example:
    >>> layer = AlbertFeedForward(64, 256)
    >>> tuple(layer(keras.ops.ones((2, 8, 64))).shape)
    (2, 8, 64)
    """

    def __init__(
        self,
        hidden_size,
        intermediate_size,
        activation="gelu",
        dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.dropout = dropout
        self.initializer_range = initializer_range
        initializer = HostTruncatedNormal(stddev=initializer_range)
        self.intermediate = keras.layers.Dense(
            intermediate_size,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="intermediate",
        )
        self.output_dense = keras.layers.Dense(
            hidden_size,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="output",
        )
        self.dropout_layer = AlbertDropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, input_shape):
        self.intermediate.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_size,))
        self.layer_norm.build(input_shape)
        self.built = True

    def call(self, inputs, training=None):
        # On [batch * length, H] rows: the bias and LayerNorm gradients then
        # sum over one axis, vectorized by XLA's CPU backend (see
        # `AlbertAttention.call`).
        rows = ops.reshape(inputs, (-1, self.hidden_size))
        x = self.activation_fn(self.intermediate(rows))
        x = self.output_dense(x)
        x = self.dropout_layer(x, training=training)
        return ops.reshape(self.layer_norm(x + rows), ops.shape(inputs))

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "activation": self.activation,
            "dropout": self.dropout,
            "initializer_range": self.initializer_range,
        }
