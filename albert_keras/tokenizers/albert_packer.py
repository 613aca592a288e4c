"""`AlbertPacker`: `[CLS] a [SEP] b [SEP]` exactly as the official run_classifier."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.tokenizers.tensorflow_inputs import keep_tensorflow_inputs


def as_ragged(ids):
    """Ragged int32 ids from a ragged tensor, a dense 1-D/2-D tensor or lists."""
    if isinstance(ids, tf.RaggedTensor):
        return tf.cast(ids, tf.int32).with_row_splits_dtype(tf.int64)
    if isinstance(ids, (list, tuple)):
        return tf.ragged.constant(ids, tf.int32, ragged_rank=1)
    ids = tf.convert_to_tensor(ids)
    if ids.shape.rank == 1:
        ids = ids[None]
    return tf.RaggedTensor.from_tensor(tf.cast(ids, tf.int32))


def keep_first(ids, lengths):
    """The first `lengths[i]` ids of each row."""
    mask = tf.ragged.range(ids.row_lengths()) < tf.expand_dims(
        tf.cast(lengths, ids.row_splits.dtype), 1
    )
    return tf.ragged.boolean_mask(ids, mask)


def paired_row_lengths(first, second):
    """`second.row_lengths()`, once checked that both batches hold as many texts.

    Batches of different sizes would otherwise broadcast one row over the
    others and give wrong features without an error.
    """
    check = tf.debugging.assert_equal(
        first.nrows(),
        second.nrows(),
        message=(
            "The two batches of a pair (text_a and text_b, question and context) "
            "must hold as many texts each: they are paired row by row. Pass "
            "them with the same batch size."
        ),
    )
    with tf.control_dependencies([check]):
        return tf.identity(second.row_lengths())


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertPacker(keras.layers.Layer):
    """Packs the ids of one or two texts into model inputs, as `run_classifier`.

    The official `convert_single_example`: `[CLS] a [SEP]`, or `[CLS] a [SEP]
    b [SEP]` when `b` has tokens (an empty `b` packs as a single text, as the
    official `if tokens_b:` does); segment ids 0 for `[CLS] a [SEP]`, 1 for `b
    [SEP]`; padding id 0 with segment 0 and mask 0. A single text is cut to
    `sequence_length - 2` tokens; a pair by `_truncate_seq_pair` (the longer
    text loses its last token until both fit in `sequence_length - 3`; on a
    tie `b` loses), computed in closed form on ragged tensors. Texts of any
    length are fine: they are cut, never an error.

    Args:
        sequence_length: int. The longest packed sequence.
        dynamic_length: bool. Pad each batch to its longest packed row
            instead of to `sequence_length` (the ids are the same; a batch
            of short texts costs less).
        cls_id, sep_id, pad_id: special ids (the SentencePiece layout's 2, 3,
            0; a WordPiece vocabulary's are in `tokenizer.special_token_ids`).

    Call arguments:
        a: ids [batch, None] (ragged, or lists); a 1-D tensor is one text.
        b: optional ids of the second texts, same batch.

    Returns: dict of int32 [batch, length]: `token_ids`, `segment_ids`,
    `padding_mask` (the inputs of every task model); [length] for 1-D inputs.

    Example:
    >>> packer = AlbertPacker(8)
    >>> packer([[10, 11, 12]], [[20, 21, 22, 23]])["token_ids"].numpy().tolist()
    [[2, 10, 11, 12, 3, 20, 21, 3]]
    """

    def __init__(
        self,
        sequence_length,
        dynamic_length=False,
        cls_id=2,
        sep_id=3,
        pad_id=0,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        keep_tensorflow_inputs(self)
        if not isinstance(sequence_length, int) or sequence_length < 3:
            raise ValueError(
                "`sequence_length` must be an integer of at least 3 ([CLS] a "
                f"[SEP] b [SEP] with one token each). Received: {sequence_length!r}"
            )
        self.sequence_length = sequence_length
        self.dynamic_length = bool(dynamic_length)
        self.cls_id, self.sep_id, self.pad_id = int(cls_id), int(sep_id), int(pad_id)

    @classmethod
    def for_tokenizer(cls, tokenizer, sequence_length, **kwargs):
        """A packer with the tokenizer's `[CLS]` and `[SEP]` ids."""
        ids = tokenizer.special_token_ids
        return cls(
            sequence_length, cls_id=ids["cls"], sep_id=ids["sep"], pad_id=0, **kwargs
        )

    def __call__(self, a, b=None, **kwargs):
        # Keras takes only tensors positionally; lists of ids are welcome here.
        a = as_ragged(a) if isinstance(a, (list, tuple)) else a
        if b is None:
            return super().__call__(a, **kwargs)
        b = as_ragged(b) if isinstance(b, (list, tuple)) else b
        return super().__call__(a, b, **kwargs)

    def call(self, a, b=None):
        one = not isinstance(a, tf.RaggedTensor) and a.shape.rank == 1
        a = as_ragged(a)
        la = a.row_lengths()
        if b is None:
            b = tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), la * 0)
        b = as_ragged(b)
        lb = paired_row_lengths(a, b)
        has_b = lb > 0
        # _truncate_seq_pair in closed form (see the class docstring).
        budget = tf.constant(self.sequence_length - 3, tf.int64)
        pair_a = tf.minimum(la, tf.maximum(budget - lb, (budget + 1) // 2))
        new_a = tf.where(has_b, pair_a, tf.minimum(la, budget + 1))
        new_b = tf.where(has_b, tf.minimum(lb, budget - new_a), 0)
        total = new_a + 2 + tf.where(has_b, new_b + 1, 0)
        if self.dynamic_length:
            length = tf.reduce_max(tf.concat([total, [0]], axis=0))
        else:
            length = tf.constant(self.sequence_length, tf.int64)
        # Dense gathers on a [batch, length] grid: no ragged ops, which make
        # big graphs (slow tracing and exports) and slow tf.data steps.
        j = tf.range(length)[None, :]
        end_a = (new_a + 1)[:, None]  # position of the first [SEP]
        in_a = (j >= 1) & (j < end_a)
        in_b = (j > end_a) & (j <= end_a + new_b[:, None])

        def take(ids, start, inside):
            flat = tf.concat([ids.flat_values, [0]], axis=0)
            index = ids.row_starts()[:, None] + j - start
            last = tf.size(flat, out_type=tf.int64) - 1
            return tf.gather(flat, tf.where(inside, index, last))

        values = tf.where(in_a, take(a, 1, in_a), take(b, end_a + 1, in_b))
        sep = (j == end_a) | ((j == total[:, None] - 1) & has_b[:, None])
        tokens = tf.where(j == 0, self.cls_id, tf.where(sep, self.sep_id, values))
        real = j < total[:, None]
        out = {
            "token_ids": tf.where(real, tokens, self.pad_id),
            "segment_ids": tf.cast(real & (j > end_a), tf.int32),
            "padding_mask": tf.cast(real, tf.int32),
        }
        if not self.dynamic_length:
            out = {
                k: tf.ensure_shape(v, [None, self.sequence_length])
                for k, v in out.items()
            }
        return {k: v[0] for k, v in out.items()} if one else out

    def compute_output_spec(self, a, b=None):
        length = None if self.dynamic_length else self.sequence_length
        return {
            key: keras.KerasTensor([None, length], dtype="int32")
            for key in ("token_ids", "segment_ids", "padding_mask")
        }

    def get_config(self):
        return {
            **super().get_config(),
            "sequence_length": self.sequence_length,
            "dynamic_length": self.dynamic_length,
            "cls_id": self.cls_id,
            "sep_id": self.sep_id,
            "pad_id": self.pad_id,
        }
