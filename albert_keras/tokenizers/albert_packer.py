"""`AlbertPacker`: `[CLS] a [SEP] b [SEP]` exactly as the official run_classifier."""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertPacker(keras.layers.Layer):
    """Packs token ids of one or two texts into fixed-length model inputs.

    As the official `run_classifier`: `[CLS] a [SEP]` or `[CLS] a [SEP] b
    [SEP]`, segment ids 0 then 1, padding with 0; a single text is cut to
    `sequence_length - 2`, a pair by `_truncate_seq_pair` (the longer one loses
    its last token until the pair fits in `sequence_length - 3`; a tie cuts
    b), computed in closed form on ragged tensors.

    Args:
        sequence_length: int. Output length.
        cls_id, sep_id, pad_id: special ids (ALBERT's 2, 3, 0).

    Call arguments:
        a: ragged int ids [batch, None].
        b: optional ragged int ids [batch, None].

    Returns: dict of int32 [batch, sequence_length]: `token_ids`,
    `segment_ids`, `padding_mask`.

    Example:
    >>> packer = AlbertPacker(8)
    >>> a = tf.ragged.constant([[10, 11, 12]])
    >>> packer(a)["token_ids"].numpy().tolist()
    [[2, 10, 11, 12, 3, 0, 0, 0]]
    """

    def __init__(self, sequence_length, cls_id=2, sep_id=3, pad_id=0, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        if sequence_length < 3:
            raise ValueError(
                f"`sequence_length` must be at least 3. Received: {sequence_length}"
            )
        self.sequence_length = sequence_length
        self.cls_id, self.sep_id, self.pad_id = cls_id, sep_id, pad_id

    @staticmethod
    def _keep(ids, lengths):
        mask = tf.ragged.range(ids.row_lengths()) < tf.expand_dims(
            tf.cast(lengths, ids.row_splits.dtype), 1
        )
        return tf.ragged.boolean_mask(ids, mask)

    def call(self, a, b=None):
        a = tf.cast(a, tf.int32)
        batch = a.nrows()
        cls = tf.fill([batch, 1], self.cls_id)
        sep = tf.fill([batch, 1], self.sep_id)
        if b is None:
            a = self._keep(a, tf.minimum(a.row_lengths(), self.sequence_length - 2))
            tokens = tf.concat([cls, a, sep], axis=1)
            segments = tf.zeros_like(tokens)
        else:
            b = tf.cast(b, tf.int32)
            budget = tf.cast(self.sequence_length - 3, a.row_splits.dtype)
            la, lb = a.row_lengths(), b.row_lengths()
            new_a = tf.minimum(la, tf.maximum(budget - lb, (budget + 1) // 2))
            new_b = tf.minimum(lb, budget - new_a)
            a, b = self._keep(a, new_a), self._keep(b, new_b)
            first = tf.concat([cls, a, sep], axis=1)
            second = tf.concat([b, sep], axis=1)
            tokens = tf.concat([first, second], axis=1)
            segments = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
        shape = [None, self.sequence_length]
        return {
            "token_ids": tokens.to_tensor(self.pad_id, shape=shape),
            "segment_ids": segments.to_tensor(0, shape=shape),
            "padding_mask": tf.ones_like(tokens).to_tensor(0, shape=shape),
        }

    def get_config(self):
        return {
            **super().get_config(),
            "sequence_length": self.sequence_length,
            "cls_id": self.cls_id,
            "sep_id": self.sep_id,
            "pad_id": self.pad_id,
        }
