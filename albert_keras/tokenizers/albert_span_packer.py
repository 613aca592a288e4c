"""`AlbertSpanPacker`: (question, context) windows exactly as the official run_squad."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.tokenizers.albert_packer import (
    as_ragged,
    keep_first,
    paired_row_lengths,
)
from albert_keras.tokenizers.ragged_rows import concat_rows
from albert_keras.tokenizers.tensorflow_inputs import keep_tensorflow_inputs


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertSpanPacker(keras.layers.Layer):
    """Packs questions and contexts into sliding windows, as `squad_utils`.

    The official `convert_examples_to_features`: the question is cut to
    `max_query_length` tokens; the context is covered by windows of at most
    `sequence_length - len(question) - 3` tokens, each starting
    `min(doc_stride, window length)` tokens after the previous one, until a
    window reaches the end; each window is `[CLS] question [SEP] window
    [SEP]` (segment ids 0, then 1 from the window on), zero-padded. An empty
    context has no window (the official code makes no feature for it).

    Besides the model inputs, each window carries what span prediction needs
    to map its logits back: `example_index` (the input row), `doc_start` (the
    window's first context token), `doc_offset` (its position in the window,
    `len(question) + 2`), `token_is_max_context` (1 where this window gives
    the token its most context, the official `_check_is_max_context`) and
    `p_mask` (1 where no answer can be: question, `[SEP]`, padding).

    Args:
        sequence_length: int. Window length (official default 384).
        doc_stride: int. Context tokens between window starts (128).
        max_query_length: int. Question tokens kept (64); must leave room for
            one context token: at most `sequence_length - 4`.
        cls_id, sep_id, pad_id: special ids (2, 3, 0 in the SentencePiece
            layout).

    Call arguments:
        question: ids [batch, None] (ragged or lists).
        context: ids [batch, None].

    Returns: dict of int32 tensors with one row per window [windows, ...]:
    `token_ids`, `segment_ids`, `padding_mask`, `p_mask`,
    `token_is_max_context` ([windows, sequence_length]), `example_index`,
    `doc_start`, `doc_offset` ([windows]).

    Example:
    >>> packer = AlbertSpanPacker(8, doc_stride=2, max_query_length=2)
    >>> out = packer([[10, 11, 12]], [[20, 21, 22, 23, 24]])
    >>> out["token_ids"].numpy().tolist()
    [[2, 10, 11, 3, 20, 21, 22, 3], [2, 10, 11, 3, 22, 23, 24, 3]]
    >>> out["token_is_max_context"].numpy().tolist()
    [[0, 0, 0, 0, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1, 1, 0]]
    """

    def __init__(
        self,
        sequence_length=384,
        doc_stride=128,
        max_query_length=64,
        cls_id=2,
        sep_id=3,
        pad_id=0,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        keep_tensorflow_inputs(self)
        for name, value in (
            ("sequence_length", sequence_length),
            ("doc_stride", doc_stride),
            ("max_query_length", max_query_length),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )
        if max_query_length > sequence_length - 4:
            raise ValueError(
                "`max_query_length` must leave room for [CLS], two [SEP] and one "
                "context token (the official code loops forever otherwise): at "
                f"most sequence_length - 4 = {sequence_length - 4}. Received: "
                f"max_query_length={max_query_length}"
            )
        self.sequence_length = sequence_length
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.cls_id, self.sep_id, self.pad_id = int(cls_id), int(sep_id), int(pad_id)

    @classmethod
    def for_tokenizer(cls, tokenizer, sequence_length=384, **kwargs):
        """A packer with the tokenizer's `[CLS]` and `[SEP]` ids."""
        ids = tokenizer.special_token_ids
        return cls(
            sequence_length, cls_id=ids["cls"], sep_id=ids["sep"], pad_id=0, **kwargs
        )

    def __call__(self, question, context, **kwargs):
        # Keras takes only tensors positionally; lists of ids are welcome here.
        if isinstance(question, (list, tuple)):
            question = as_ragged(question)
        if isinstance(context, (list, tuple)):
            context = as_ragged(context)
        return super().__call__(question, context, **kwargs)

    def call(self, question, context):
        question, context = as_ragged(question), as_ragged(context)
        question = keep_first(
            question, tf.minimum(question.row_lengths(), self.max_query_length)
        )
        lq = question.row_lengths()
        ld = paired_row_lengths(question, context)
        room, step = self._room_and_step(lq)
        count = tf.where(
            ld == 0,
            tf.zeros_like(ld),
            1 + tf.maximum(ld - room + step - 1, 0) // step,  # 1 + ceil(...)
        )
        example = tf.repeat(tf.range(tf.size(ld, out_type=tf.int64)), count)
        k = tf.ragged.range(count).flat_values
        start = k * tf.gather(step, example)
        length = tf.minimum(tf.gather(ld, example) - start, tf.gather(room, example))
        # The window's context tokens, gathered from the flat context; the
        # gather index (a token's place in the whole batch) names the token.
        offsets = tf.ragged.range(length)
        place = offsets + tf.expand_dims(
            tf.gather(context.row_starts(), example) + start, 1
        )
        doc = tf.gather(context.flat_values, place)
        query = tf.gather(question, example)
        windows = tf.shape(example, out_type=tf.int64)[0]
        cls = tf.fill([windows, 1], self.cls_id)
        sep = tf.fill([windows, 1], self.sep_id)
        head = concat_rows([cls, query, sep])
        tail = concat_rows([doc, sep])
        tokens = concat_rows([head, tail])
        segments = concat_rows([tf.zeros_like(head), tf.ones_like(tail)])
        p_mask = concat_rows(
            [
                tf.zeros_like(cls),
                tf.ones_like(query),
                tf.ones_like(sep),
                tf.zeros_like(doc),
                tf.ones_like(sep),
            ]
        )
        is_max = self._max_context(
            offsets, place, length, tf.size(context.flat_values, out_type=tf.int64)
        )
        max_context = concat_rows([tf.zeros_like(head), is_max, tf.zeros_like(sep)])
        shape = [None, self.sequence_length]
        return {
            "token_ids": tokens.to_tensor(self.pad_id, shape=shape),
            "segment_ids": segments.to_tensor(0, shape=shape),
            "padding_mask": tf.ones_like(tokens).to_tensor(0, shape=shape),
            "p_mask": p_mask.to_tensor(1, shape=shape),
            "token_is_max_context": max_context.to_tensor(0, shape=shape),
            "example_index": tf.cast(example, tf.int32),
            "doc_start": tf.cast(start, tf.int32),
            "doc_offset": tf.cast(tf.gather(lq, example) + 2, tf.int32),
        }

    def _room_and_step(self, question_lengths):
        """Context tokens per window (`max_tokens_for_doc`) and between starts."""
        room = self.sequence_length - 3 - question_lengths
        return room, tf.minimum(room, self.doc_stride)

    def window_capacity(self, question_lengths, max_windows):
        """Context tokens the first `max_windows` windows of a question hold.

        A context cut to this many tokens has exactly the first `max_windows`
        windows of the whole context (only `token_is_max_context` differs at
        the cut: no later window competes).

        Args:
            question_lengths: int tensor [batch]. Question tokens, before the
                cut to `max_query_length`.
            max_windows: int. Windows per question, at least 1.

        Returns: int64 [batch].
        """
        lq = tf.minimum(tf.cast(question_lengths, tf.int64), self.max_query_length)
        room, step = self._room_and_step(lq)
        return room + (max_windows - 1) * step

    @staticmethod
    def _max_context(offsets, place, length, tokens):
        """The official `_check_is_max_context` for every window token.

        A token's score in a window is min(left, right context) + 0.01 *
        window length (float64, as Python computes it); the best window wins,
        the first one on a tie.
        """
        window = offsets.value_rowids()
        j = offsets.flat_values
        span = tf.gather(length, window)
        score = tf.cast(tf.minimum(j, span - 1 - j), tf.float64) + 0.01 * tf.cast(
            span, tf.float64
        )
        token = place.flat_values
        best = tf.math.unsorted_segment_max(score, token, tokens)
        candidate = tf.where(score == tf.gather(best, token), window, tf.int64.max)
        first = tf.math.unsorted_segment_min(candidate, token, tokens)
        is_max = tf.cast(window == tf.gather(first, token), tf.int32)
        return offsets.with_flat_values(is_max)

    def get_config(self):
        return {
            **super().get_config(),
            "sequence_length": self.sequence_length,
            "doc_stride": self.doc_stride,
            "max_query_length": self.max_query_length,
            "cls_id": self.cls_id,
            "sep_id": self.sep_id,
            "pad_id": self.pad_id,
        }
