"""`SquadV2Head`: the official ALBERT SQuAD 2.0 head (squad_utils.create_v2_model)."""

import keras
from keras import ops

from albert_keras.config_checks import is_positive_int
from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.layers.position_gather import take_positions

_NEG = 1e30


@keras.saving.register_keras_serializable(package="albert_keras")
class SquadV2Head(keras.layers.Layer):
    """Start logits, end logits conditioned on the start, and a no-answer logit.

    As the official `create_v2_model` (from XLNet):

    - start: dense H -> 1 on every token, masked by `p_mask` (positions that
      cannot start an answer get -1e30), log-softmax over the sequence;
    - end: for a start token s, dense 2H -> H (tanh) on [token, token s],
      LayerNorm (epsilon 1e-12), dense H -> 1, masked, log-softmax. In
      training s is the gold `start_positions`; at inference a beam takes
      the `start_n_top` best starts and for each the `end_n_top` best ends;
    - answer class: dense 2H -> H (tanh) on [start-probability-weighted
      token, `[CLS]` token], dropout, dense H -> 1 without bias: the logit
      of "no answer".

    Args:
        hidden_size: int. H.
        start_n_top: int. Starts kept by the inference beam (official 5).
        end_n_top: int. Ends kept per start (official 5).
        dropout: float. Dropout in the answer-class branch (official 0.1).
        initializer_range: float. Truncated-normal stddev.

    Call arguments:
        sequence: float [batch, length, H].
        p_mask: int/float [batch, length], 1 where no answer can be.
        start_positions: int [batch], the start the end logits condition on
            (the gold start in training).
        training: bool. The beam outputs are zeros in training (unused there).

    Returns: dict of `start_log_probs`, `end_log_probs` [batch, length],
    `cls_logits` [batch] (float32), and the beam's `start_top_log_probs`,
    `start_top_index` [batch, start_n_top], `end_top_log_probs`,
    `end_top_index` [batch, start_n_top * end_n_top] (candidate i * end_n_top
    + j is the j-th end of the i-th start, the official order).

    Example:
    >>> head = SquadV2Head(8, start_n_top=2, end_n_top=3)
    >>> out = head(keras.ops.ones((1, 6, 8)), keras.ops.zeros((1, 6)),
    ...            keras.ops.zeros((1,), "int32"))
    >>> tuple(out["end_top_index"].shape), tuple(out["cls_logits"].shape)
    ((1, 6), (1,))
    """

    def __init__(
        self,
        hidden_size,
        start_n_top=5,
        end_n_top=5,
        dropout=0.1,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_beam(start_n_top, end_n_top)
        self.hidden_size = hidden_size
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout = dropout
        self.initializer_range = initializer_range

        def dense(units, name, activation=None, use_bias=True):
            return keras.layers.Dense(
                units,
                activation=activation,
                use_bias=use_bias,
                kernel_initializer=HostTruncatedNormal(stddev=initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        self.start_dense = dense(1, "start_dense")
        self.end_dense_0 = dense(hidden_size, "end_dense_0", "tanh")
        self.end_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="end_layer_norm"
        )
        self.end_dense_1 = dense(1, "end_dense_1")
        self.answer_dense_0 = dense(hidden_size, "answer_dense_0", "tanh")
        self.answer_dropout = AlbertDropout(
            dropout, dtype=self.dtype_policy, name="answer_dropout"
        )
        self.answer_dense_1 = dense(1, "answer_dense_1", use_bias=False)

    def build(self, sequence_shape, p_mask_shape=None, start_positions_shape=None):
        h = self.hidden_size
        self.start_dense.build((None, None, h))
        self.end_dense_0.build((None, None, 2 * h))
        self.end_layer_norm.build((None, None, h))
        self.end_dense_1.build((None, None, h))
        self.answer_dense_0.build((None, 2 * h))
        self.answer_dense_1.build((None, h))
        self.built = True

    @staticmethod
    def _masked(logits, p_mask):
        return logits * (1.0 - p_mask) - _NEG * p_mask

    def _end_logits(self, tokens, start_features):
        """tokens [..., L, H], start features broadcast to them -> [..., L]."""
        start_features = ops.broadcast_to(start_features, ops.shape(tokens))
        x = self.end_dense_0(ops.concatenate([tokens, start_features], axis=-1))
        x = self.end_dense_1(self.end_layer_norm(x))
        return ops.cast(ops.squeeze(x, -1), "float32")

    def call(self, sequence, p_mask, start_positions, training=None):
        p_mask = ops.cast(p_mask, "float32")
        start_logits = ops.cast(ops.squeeze(self.start_dense(sequence), -1), "float32")
        start_logits = self._masked(start_logits, p_mask)
        start_log_probs = ops.log_softmax(start_logits, axis=-1)

        gold = take_positions(
            sequence, ops.reshape(start_positions, (-1, 1))
        )  # [b, 1, H]
        end_logits = self._masked(self._end_logits(sequence, gold), p_mask)
        end_log_probs = ops.log_softmax(end_logits, axis=-1)

        batch = ops.shape(sequence)[0]
        k1, k2 = self.start_n_top, self.end_n_top
        if training:
            start_top_log_probs = ops.zeros((batch, k1), "float32")
            start_top_index = ops.zeros((batch, k1), "int32")
            end_top_log_probs = ops.zeros((batch, k1 * k2), "float32")
            end_top_index = ops.zeros((batch, k1 * k2), "int32")
        else:
            start_top_log_probs, start_top_index = ops.top_k(start_log_probs, k1)
            start_top_index = ops.cast(start_top_index, "int32")
            chosen = take_positions(sequence, start_top_index)  # [b, k1, H]
            tokens = ops.broadcast_to(
                sequence[:, None], (batch, k1) + tuple(ops.shape(sequence)[1:])
            )
            beam_logits = self._end_logits(tokens, chosen[:, :, None, :])
            beam_logits = self._masked(beam_logits, p_mask[:, None, :])
            beam_log_probs = ops.log_softmax(beam_logits, axis=-1)  # [b, k1, L]
            end_top_log_probs, end_top_index = ops.top_k(beam_log_probs, k2)
            end_top_log_probs = ops.reshape(end_top_log_probs, (batch, k1 * k2))
            end_top_index = ops.reshape(
                ops.cast(end_top_index, "int32"), (batch, k1 * k2)
            )

        start_p = ops.softmax(start_logits, axis=-1)
        start_feature = ops.einsum(
            "blh,bl->bh", sequence, ops.cast(start_p, sequence.dtype)
        )
        answer = ops.concatenate([start_feature, sequence[:, 0]], axis=-1)
        answer = self.answer_dropout(self.answer_dense_0(answer), training=training)
        cls_logits = ops.cast(ops.squeeze(self.answer_dense_1(answer), -1), "float32")
        return {
            "start_log_probs": start_log_probs,
            "end_log_probs": end_log_probs,
            "cls_logits": cls_logits,
            "start_top_log_probs": start_top_log_probs,
            "start_top_index": start_top_index,
            "end_top_log_probs": end_top_log_probs,
            "end_top_index": end_top_index,
        }

    def compute_output_spec(
        self, sequence, p_mask=None, start_positions=None, training=None
    ):
        batch, length = sequence.shape[0], sequence.shape[1]
        k1, k2 = self.start_n_top, self.end_n_top

        def spec(shape, dtype="float32"):
            return keras.KerasTensor(shape, dtype=dtype)

        return {
            "start_log_probs": spec((batch, length)),
            "end_log_probs": spec((batch, length)),
            "cls_logits": spec((batch,)),
            "start_top_log_probs": spec((batch, k1)),
            "start_top_index": spec((batch, k1), "int32"),
            "end_top_log_probs": spec((batch, k1 * k2)),
            "end_top_index": spec((batch, k1 * k2), "int32"),
        }

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_size": self.hidden_size,
            "start_n_top": self.start_n_top,
            "end_n_top": self.end_n_top,
            "dropout": self.dropout,
            "initializer_range": self.initializer_range,
        }


def check_beam(start_n_top, end_n_top) -> None:
    """ValueError unless both beam sizes are whole numbers of 1 or more (0
    gave an empty beam: no answer for any question).

    Example:
    >>> check_beam(5, 5)
    """
    for name, value in (("start_n_top", start_n_top), ("end_n_top", end_n_top)):
        if not is_positive_int(value):
            raise ValueError(
                f"`{name}` is a size of the inference beam: give a whole number "
                f"of 1 or more (the official is 5). Received: {name}={value!r}"
            )
