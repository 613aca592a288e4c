"""Building blocks of ALBERT (see README.md in this folder)."""

from albert_keras.layers.activations import gelu_tanh, get_activation
from albert_keras.layers.albert_attention import AlbertAttention
from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.albert_feed_forward import AlbertFeedForward
from albert_keras.layers.factorized_embedding import FactorizedEmbedding
from albert_keras.layers.masked_lm_head import MaskedLMHead
from albert_keras.layers.sentence_order_head import SentenceOrderHead
from albert_keras.layers.shared_transformer_encoder import SharedTransformerEncoder
from albert_keras.layers.squad_v2_head import SquadV2Head
from albert_keras.layers.transformer_block import TransformerBlock

__all__ = [
    "AlbertAttention",
    "AlbertDropout",
    "AlbertFeedForward",
    "FactorizedEmbedding",
    "MaskedLMHead",
    "SentenceOrderHead",
    "SharedTransformerEncoder",
    "SquadV2Head",
    "TransformerBlock",
    "gelu_tanh",
    "get_activation",
]
