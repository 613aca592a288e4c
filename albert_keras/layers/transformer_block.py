"""`TransformerBlock`: one post-LN attention + FFN block of ALBERT."""

import keras

from albert_keras.layers.albert_attention import AlbertAttention
from albert_keras.layers.albert_dropout import dropout_states
from albert_keras.layers.albert_feed_forward import AlbertFeedForward


@keras.saving.register_keras_serializable(package="albert_keras")
class TransformerBlock(keras.layers.Layer):
    """Self-attention then feed-forward, each with residual and LayerNorm.

    This is the official `attention_ffn_block`. Blocks can share their
    sub-blocks: pass an existing `attention` or `feed_forward` layer and this
    block uses it instead of making its own (the paper's attention-only and
    FFN-only sharing). Shared sub-blocks are not part of `get_config`; the
    encoder that made them re-creates the sharing.

    Args:
        hidden_size: int. Width H.
        num_heads: int. Attention heads.
        intermediate_size: int. FFN inner width.
        activation: str. FFN activation, official name.
        dropout: float. Hidden dropout.
        attention_dropout: float. Dropout on attention probabilities.
        initializer_range: float. Stddev of the truncated-normal initializer.
        attention: optional `AlbertAttention` to share.
        feed_forward: optional `AlbertFeedForward` to share.

    Example:
    >>> block = TransformerBlock(64, 4, 256)
    >>> x = keras.ops.ones((2, 8, 64))
    >>> tuple(block(x, keras.ops.ones((2, 8), "int32")).shape)
    (2, 8, 64)
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        intermediate_size,
        activation="gelu",
        dropout=0.0,
        attention_dropout=0.0,
        initializer_range=0.02,
        attention=None,
        feed_forward=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range
        self.attention = attention or AlbertAttention(
            hidden_size,
            num_heads,
            dropout=dropout,
            attention_dropout=attention_dropout,
            initializer_range=initializer_range,
            dtype=self.dtype_policy,
            name="attention",
        )
        self.feed_forward = feed_forward or AlbertFeedForward(
            hidden_size,
            intermediate_size,
            activation=activation,
            dropout=dropout,
            initializer_range=initializer_range,
            dtype=self.dtype_policy,
            name="feed_forward",
        )

    def build(self, input_shape):
        if not self.attention.built:
            self.attention.build(input_shape)
        if not self.feed_forward.built:
            self.feed_forward.build(input_shape)
        self.built = True

    def call(self, inputs, padding_mask=None, training=None, query_positions=None):
        # `query_positions`: see `AlbertAttention`; the FFN is per position.
        x = self.attention(
            inputs,
            padding_mask=padding_mask,
            training=training,
            query_positions=query_positions,
        )
        return self.feed_forward(x, training=training)

    def rematerialized_call(self, layer_call, *args, **kwargs):
        """`call`, recomputed in the backward pass under a `keras.RematScope`.

        Keras's own wrapper passes the keyword arguments through
        `tf.recompute_grad`, which takes none in graph mode; here the hidden
        states go positionally, and the mask and positions, integers that
        no gradient flows to (`tf.recompute_grad` would warn that it cannot
        watch them), are closed over, on every backend. Dropout draws the
        forward's masks again when recomputed: its random states are set to
        their values before the block inside the recomputed function, and
        the states after it come out of that function.
        """
        if super().rematerialized_call(layer_call, *args, **kwargs) is layer_call:
            return layer_call

        def call(inputs, padding_mask=None, training=None, query_positions=None):
            seeds = dropout_states(self)
            start = [keras.ops.copy(seed.value) for seed in seeds]
            jax = keras.config.backend() == "jax"

            def on_hidden_states(hidden_states):
                # TF and torch run this again in the backward pass: it draws
                # the forward's dropout masks again and leaves the states as
                # found. JAX replays it, and would leak a state set inside.
                entry = start if jax else [keras.ops.copy(s.value) for s in seeds]
                _assign(seeds, start)
                outputs = layer_call(
                    hidden_states,
                    padding_mask=padding_mask,
                    training=training,
                    query_positions=query_positions,
                )
                end = [keras.ops.copy(seed.value) for seed in seeds]
                _assign(seeds, entry)
                return outputs, end

            outputs, end = keras.remat(on_hidden_states)(inputs)
            _assign(seeds, end)
            return outputs

        return call

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "intermediate_size": self.intermediate_size,
            "activation": self.activation,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "initializer_range": self.initializer_range,
        }


def _assign(variables, values):
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)
