"""`FactorizedEmbedding`: V x E embeddings, LayerNorm on E, then E -> H."""

import keras
from keras import ops

from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="albert_keras")
class FactorizedEmbedding(keras.layers.Layer):
    """Word, position and segment embeddings of width E, projected to width H.

    The official graph: word + segment + position embeddings (all E wide),
    LayerNorm (epsilon 1e-12) on E, dropout, then a dense E -> H mapping
    (`embedding_hidden_mapping_in`) that is absent when E == H.

    Args:
        vocabulary_size: int. Number of word pieces V.
        embedding_size: int. Embedding width E (128 in every released ALBERT).
        hidden_size: int. Encoder width H; no projection when equal to E.
        max_sequence_length: int. Number of position embeddings.
        num_segments: int. Number of segment (token type) ids.
        dropout: float. Dropout after the LayerNorm.
        initializer_range: float. Stddev of the truncated-normal initializer.

    Call arguments:
        token_ids: int tensor [batch, length], each in [0, V). An id outside
            fails on TensorFlow (CPU) and PyTorch, but JAX returns NaN for its
            row and TensorFlow on a GPU zeros (their gathers' out-of-bounds
            rules): a tokenizer larger than the model's vocabulary gives no
            error there (`with_tokenizer` checks the sizes).
        segment_ids: int tensor [batch, length], each in [0, num_segments)
            (the same rules).
        return_unprojected: bool. Also return the E-wide output before the
            projection (the official `get_embedding_output()`).

    Example:
    >>> layer = FactorizedEmbedding(1000, 32, 64, max_sequence_length=16)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> tuple(layer(ids, keras.ops.zeros((2, 8), "int32")).shape)
    (2, 8, 64)
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_size,
        hidden_size,
        max_sequence_length=512,
        num_segments=2,
        dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.initializer_range = initializer_range
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = AlbertDropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.projection = None
        if embedding_size != hidden_size:
            self.projection = keras.layers.Dense(
                hidden_size,
                kernel_initializer=self._initializer(),
                dtype=self.dtype_policy,
                name="projection",
            )

    def _initializer(self):
        return HostTruncatedNormal(stddev=self.initializer_range)

    def build(self, input_shape=None):
        e = self.embedding_size
        # The tables are read in their own dtype (float32) under a mixed
        # policy (`autocast=False`), so a lookup's gradient, a scatter-add,
        # runs in float32. Suspected cause of a 17x slower bfloat16 training
        # step on an H200 (JAX): bfloat16 scatter-adds, where the segment
        # table's 2 rows take an update from every token.
        self.word_embeddings = self.add_weight(
            shape=(self.vocabulary_size, e),
            initializer=self._initializer(),
            name="word_embeddings",
            autocast=False,
        )
        self.token_type_embeddings = self.add_weight(
            shape=(self.num_segments, e),
            initializer=self._initializer(),
            name="token_type_embeddings",
            autocast=False,
        )
        self.position_embeddings = self.add_weight(
            shape=(self.max_sequence_length, e),
            initializer=self._initializer(),
            name="position_embeddings",
            autocast=False,
        )
        self.layer_norm.build((None, None, e))
        if self.projection is not None:
            self.projection.build((None, None, e))
        self.built = True

    def call(self, token_ids, segment_ids, training=None, return_unprojected=False):
        length = ops.shape(token_ids)[1]
        if isinstance(length, int) and length > self.max_sequence_length:
            raise ValueError(
                f"Sequence length {length} exceeds the model's "
                f"max_position_embeddings={self.max_sequence_length}. Truncate "
                "the input (the tokenizer's `sequence_length`) or use a model "
                "with more position embeddings."
            )
        x = ops.take(self.word_embeddings, token_ids, axis=0)
        x = x + ops.take(self.token_type_embeddings, segment_ids, axis=0)
        table = ops.convert_to_tensor(self.position_embeddings)
        positions = ops.slice(table, (0, 0), (length, ops.shape(table)[1]))
        # Summed in float32, then cast once to the compute dtype.
        x = ops.cast(x + positions[None, :, :], self.compute_dtype)
        x = self.layer_norm(x)
        x = self.dropout_layer(x, training=training)
        unprojected = x
        if self.projection is not None:
            x = self.projection(x)
        if return_unprojected:
            return x, unprojected
        return x

    def compute_output_shape(self, token_ids_shape, *args, **kwargs):
        return tuple(token_ids_shape) + (self.hidden_size,)

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary_size": self.vocabulary_size,
            "embedding_size": self.embedding_size,
            "hidden_size": self.hidden_size,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
            "dropout": self.dropout,
            "initializer_range": self.initializer_range,
        }
