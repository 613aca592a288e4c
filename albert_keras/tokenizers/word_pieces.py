"""`word_pieces`: the pieces of pre-split words, and where each word is tagged.

Tagging (token classification) labels words, the model sees pieces. Each
word is tokenized on its own (SentencePiece never lets a piece cross
whitespace, so these are the pieces of the whole sentence), and the word's
label goes on one piece: its first, or its second where the first is
SentencePiece's bare word boundary "▁" (as "▁" "60" for "60"; that piece
is the same in every such word and says nothing about it). A word with no
piece at all (only characters the tokenizer drops) becomes the unknown
token, so that every word has a place and a prediction. The fine-tuning
features and the exported text model both call this: they agree by
construction.
"""

from __future__ import annotations

import tensorflow as tf

from albert_keras.tokenizers.ragged_rows import concat_rows


def space_piece_id(tokenizer):
    """The id of SentencePiece's bare word-boundary piece "▁", or None.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> tokenizer.id_to_token(space_piece_id(tokenizer))
    '▁'
    """
    space = tokenizer.token_to_id("\u2581")  # the unknown id if there is none
    return space if tokenizer.id_to_token(space) == "\u2581" else None


def word_pieces(tokenizer, words):
    """The piece ids of each sentence of words, and each word's tagged piece.

    Args:
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        words: a string `tf.RaggedTensor` [sentences, (words)].

    Returns:
        (pieces, positions): `pieces` int32 ragged [sentences, (pieces)], the
        words' pieces back to back; `positions` int32 ragged [sentences,
        (words)], the index in `pieces` of the piece that carries each
        word's tag.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> words = tf.ragged.constant([["Mr.", "Darcy", "smiled"]])
    >>> pieces, positions = word_pieces(tokenizer, words)
    >>> positions.to_list(), pieces.row_lengths().numpy().tolist()
    ([[0, 2, 3]], [4])
    """
    flat = tf.cast(tokenizer(words.flat_values), tf.int32)
    counts = tf.cast(flat.row_lengths(), tf.int32)
    # An empty word: the unknown token in its place.
    unk = tokenizer.special_token_ids["unk"]
    unknown = tf.fill([flat.nrows(), 1], tf.constant(unk, tf.int32))
    with_unk = concat_rows([flat, unknown])
    keep = tf.ragged.range(counts + 1) < tf.expand_dims(tf.maximum(counts, 1), 1)
    flat = tf.ragged.boolean_mask(with_unk, keep)
    counts = tf.maximum(counts, 1)
    skip = tf.zeros_like(counts)
    space = space_piece_id(tokenizer)
    if space is not None:
        first = tf.gather(flat.flat_values, flat.row_starts())
        skip = tf.cast((first == space) & (counts > 1), tf.int32)
    # Where each word starts among its sentence's pieces.
    ends = tf.cumsum(counts)
    sentence_of_word = tf.cast(words.value_rowids(), tf.int32)
    first_word = tf.cast(words.row_starts(), tf.int32)
    before_sentence = tf.gather(
        tf.concat([[0], ends], 0), tf.gather(first_word, sentence_of_word)
    )
    starts = ends - counts - before_sentence
    positions = words.with_flat_values(starts + skip)
    per_sentence = tf.math.unsorted_segment_sum(counts, sentence_of_word, words.nrows())
    pieces = tf.RaggedTensor.from_row_lengths(
        flat.flat_values, tf.cast(per_sentence, tf.int64)
    )
    return pieces, positions


def packed_positions(positions, sequence_length):
    """Positions in the packed row (after `[CLS]`), -1 for words cut off.

    Args:
        positions: ragged int [sentences, (words)] from `word_pieces`.
        sequence_length: the packed length (a single text keeps
            `sequence_length - 2` pieces).

    Example:
    >>> packed_positions(tf.ragged.constant([[0, 2, 5]]), 6).to_list()
    [[1, 3, -1]]
    """
    inside = positions < sequence_length - 2
    return tf.where(inside, positions + 1, -tf.ones_like(positions))
