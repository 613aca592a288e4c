"""`masked_text_ids`: texts with `[MASK]` written in them -> ids with mask ids."""

from __future__ import annotations

import tensorflow as tf

from albert_keras.tokenizers import unicode_tables
from albert_keras.tokenizers.ragged_rows import concat_rows

MASK_TOKEN = "[MASK]"


def masked_text_ids(tokenizer, texts):
    """The ids of texts in which each literal `[MASK]` stands for one piece.

    The text between the masks is tokenized as the official rules do; each
    `[MASK]` becomes the mask id. A piece of text that follows a mask with
    no whitespace between ("[MASK]." or "[MASK]ing") is tokenized as it
    continues a word (`tokenize_continuations`): its pieces are those it has
    inside the whole text, as the model saw them in pretraining. So "Emma is
    a [MASK]." gives the pieces of "Emma is a lady." with "▁lady" masked
    (transformers' AlbertTokenizer puts a spurious "▁" before the ".").
    Only `[MASK]` as written, in capitals, is a mask.

    Args:
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        texts: string tensor [batch], or a list of str.

    Returns:
        ragged int32 ids [batch, None].

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> ids = masked_text_ids(tokenizer, ["Emma is a [MASK]."])
    >>> [tokenizer.id_to_token(i) for i in ids[0].numpy()]
    ['▁emma', '▁is', '▁a', '[MASK]', '.']
    """
    texts = tf.reshape(tf.convert_to_tensor(texts, tf.string), [-1])
    segments = tf.strings.split(texts, sep=MASK_TOKEN)  # [batch, masks + 1]
    flat = segments.flat_values
    index = tf.ragged.range(segments.row_lengths()).flat_values
    space = unicode_tables.regex_class("whitespace")
    continues = tf.logical_and(
        index > 0,
        tf.logical_not(tf.strings.regex_full_match(flat, f"(?s)({space}.*)?")),
    )
    pieces = _tokenize_in_two(tokenizer, flat, continues)
    # A mask after every segment but the last of its text.
    before_mask = index < tf.repeat(segments.row_lengths(), segments.row_lengths()) - 1
    mask_id = tf.constant(tokenizer.token_to_id(MASK_TOKEN), tf.int32)
    masks = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.math.count_nonzero(before_mask)], mask_id),
        tf.cast(before_mask, tf.int64),
    )
    pieces = concat_rows([pieces, masks])
    return segments.with_flat_values(pieces).merge_dims(1, 2)


def _tokenize_in_two(tokenizer, texts, continues):
    """Ragged ids of `texts`, those where `continues` holds tokenized as
    continuations, in the order given."""
    part = tf.cast(continues, tf.int32)
    order = tf.dynamic_partition(tf.range(tf.size(texts)), part, 2)
    parts = tf.dynamic_partition(texts, part, 2)
    starts = tokenizer(parts[0])
    rest = tokenizer.tokenize_continuations(parts[1])
    both = tf.concat(
        [starts.with_row_splits_dtype(tf.int64), rest.with_row_splits_dtype(tf.int64)],
        axis=0,
    )
    return tf.gather(both, tf.argsort(tf.concat(order, axis=0)))
