"""`gradient_checkpointing`: recompute the transformer blocks in the backward pass."""

import keras

from albert_keras.layers.shared_transformer_encoder import block_names


def gradient_checkpointing(config):
    """A `keras.RematScope` under which a model recomputes each block's activations.

    Build the model inside it. Every application of a transformer block then
    keeps only its input for the backward pass and recomputes the rest there
    (`jax.checkpoint`, `tf.recompute_grad` or torch's checkpoint, through
    Keras), so activation memory no longer grows with the block's inner
    tensors (attention scores, the FFN's intermediate) times L: about a third
    more compute for much less memory, what lets xxlarge train at 512 tokens.
    The numbers are unchanged. With all layers shared the one block is
    recomputed L times, once per layer.

    Args:
        config: `AlbertConfig` of the model to build.

    Returns:
        `keras.RematScope` naming the encoder's blocks.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> config = AlbertConfig.from_preset("albert_tiny")
    >>> with gradient_checkpointing(config):
    ...     backbone = AlbertBackbone(config)
    """
    names = block_names(config.num_hidden_layers, config.inner_group_num)
    return keras.RematScope(mode="list_of_layers", layer_names=names)
