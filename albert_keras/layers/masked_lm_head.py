"""`MaskedLMHead`: dense H -> E, activation, LayerNorm, tied decoder + bias."""

import keras
from keras import ops

from albert_keras.layers.activations import get_activation
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.layers.position_gather import take_positions


@keras.saving.register_keras_serializable(package="albert_keras")
class MaskedLMHead(keras.layers.Layer):
    """The official `cls/predictions` head, predicting the tokens at given positions.

    Gathers the encoder output at `mask_positions`, applies a dense H -> E
    transform with the model's activation and a LayerNorm (epsilon 1e-12), and
    decodes with the transposed word-embedding matrix plus an output bias.

    Args:
        embedding_layer: the `FactorizedEmbedding` whose `word_embeddings` are
            the decoder (tied weights, as in the paper and the checkpoints).
        activation: str. Official activation name of the transform.
        initializer_range: float. Stddev of the truncated-normal initializer.

    Call arguments:
        inputs: float tensor [batch, length, H].
        mask_positions: int tensor [batch, num_predictions], or None when
            `inputs` already holds only the rows to predict.

    Returns: logits [batch, num_predictions, V].

    Example:
    >>> from albert_keras.layers import FactorizedEmbedding
    >>> embedding = FactorizedEmbedding(100, 16, 32)
    >>> _ = embedding(keras.ops.ones((1, 4), "int32"), keras.ops.zeros((1, 4), "int32"))
    >>> head = MaskedLMHead(embedding)
    >>> tuple(head(keras.ops.ones((1, 4, 32)), keras.ops.zeros((1, 2), "int32")).shape)
    (1, 2, 100)
    """

    def __init__(
        self, embedding_layer, activation="gelu", initializer_range=0.02, **kwargs
    ):
        super().__init__(**kwargs)
        self.embedding_layer = embedding_layer
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.initializer_range = initializer_range
        self.vocabulary_size = embedding_layer.vocabulary_size
        self.embedding_size = embedding_layer.embedding_size
        self.dense = keras.layers.Dense(
            self.embedding_size,
            kernel_initializer=HostTruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="transform",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="transform_layer_norm"
        )

    def build(self, inputs_shape, mask_positions_shape=None):
        self.dense.build(inputs_shape)
        self.layer_norm.build(tuple(inputs_shape[:-1]) + (self.embedding_size,))
        self.output_bias = self.add_weight(
            shape=(self.vocabulary_size,), initializer="zeros", name="output_bias"
        )
        self.built = True

    def call(self, inputs, mask_positions=None):
        x = inputs
        if mask_positions is not None:
            x = take_positions(inputs, mask_positions)
        x = self.activation_fn(self.dense(x))
        x = self.layer_norm(x)
        table = ops.cast(self.embedding_layer.word_embeddings, x.dtype)
        logits = ops.matmul(x, ops.transpose(table))
        return logits + ops.cast(self.output_bias, x.dtype)

    def compute_output_shape(self, inputs_shape, mask_positions_shape=None):
        rows = mask_positions_shape or inputs_shape[:-1]
        return tuple(rows) + (self.vocabulary_size,)

    def get_config(self):
        # The embedding layer is not serialized here: the task model that owns
        # this head re-creates it from its backbone.
        return {
            **super().get_config(),
            "activation": self.activation,
            "initializer_range": self.initializer_range,
        }
