"""`AlbertTokenizer`: the official ALBERT SentencePiece tokenization, in-graph."""

from __future__ import annotations

import os

import keras
import numpy as np
import tensorflow as tf

from albert_keras.atomic_files import atomic_write
from albert_keras.tokenizers import unicode_ops, unicode_tables
from albert_keras.tokenizers.ragged_rows import concat_rows
from albert_keras.tokenizers.tokenizer_base import AlbertTokenizerBase
from albert_keras.tokenizers.vocabulary_files import (
    SENTENCEPIECE_SPECIALS,
    read_sentencepiece_model,
)

SPIECE_UNDERLINE = "\u2581"
ASSET_FILE = "spiece.model"


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTokenizer(AlbertTokenizerBase):
    """Text -> ALBERT ids with a SentencePiece model, exactly as `tokenization.py`.

    What the official code (`albert-tensorflow` 1.1, `run_classifier` and
    `run_squad`) does to a text, inside the TensorFlow graph, so it runs in
    `tf.data` and in exported SavedModels:

    1. `preprocess_text`: whitespace runs (Python's `str.split()` set) to one
       space, ends stripped; NFKD (by Python's Unicode version, which
       leaves alone characters tf-text's newer ICU decomposes); characters
       with a nonzero canonical combining class removed; `str.lower()` if
       `lowercase` (final sigma included). Neither that release nor the
       GitHub code rewrites `` and '' (that is XLNet's and HF's
       `preprocess_text`).
    2. SentencePiece encoding with tf-text's `FastSentencepieceTokenizer`: the
       same Viterbi search as the `sentencepiece` package's (not the older
       lattice search tf-text's `SentencepieceTokenizer` bundles, which splits
       "$40,000,000" otherwise). One difference remains: the package compares
       path scores in double precision, tf-text in float, so where two
       orders of the same pieces tie exactly ("0"+"00" vs "00"+"0") the
       rounding can pick the other order (rare; see the tests). Both sum
       path scores over the whole text, so far into a text of a megabyte
       (past the first ~28,000 pieces in the tests) a near tie can also go
       the other way; packing keeps at most 512 and is unaffected.
    3. `encode_pieces`: a piece ending in a digit and "," is encoded again
       without its "▁" and followed by ",". Under Python 3 the official test for
       a leading "▁" compares `str` to `bytes` and never holds, so the
       re-encoded stem keeps the "▁" SentencePiece puts in front of it; so do we.

    Bytes that are not UTF-8 are dropped (the official `convert_to_unicode`
    decodes with errors="ignore"); empty and very long texts are fine. The
    SentencePiece model is a Keras asset (`.keras` files carry it; it is not
    in the config) and a graph constant in exported models.

    Args:
        proto: the SentencePiece model: a path, or its bytes. Must be a
            unigram model with `[CLS]`, `[SEP]`, `[MASK]` (the official layout
            `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4).
        lowercase: lowercase in `preprocess_text`, as `do_lower_case` (the
            released English models are uncased: True).

    Call arguments:
        inputs: string tensor [batch] (or a scalar, or a Python list of str).

    Returns: ragged int32 ids [batch, None] (1-D ids for a scalar).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> ids = tokenizer(["Emma Woodhouse, handsome"])
    >>> [tokenizer.id_to_token(i) for i in ids[0].numpy()]
    ['▁emma', '▁woodhouse', ',', '▁handsome']
    """

    _SPECIALS = SENTENCEPIECE_SPECIALS
    _NO_VOCABULARY = "no SentencePiece model yet: pass `proto` (a .model path or bytes)"

    def __init__(self, proto=None, lowercase=True, **kwargs):
        super().__init__(lowercase=lowercase, **kwargs)
        self._proto = None
        if proto is not None:
            self.set_proto(proto)

    def set_proto(self, proto):
        """Loads (and checks) the SentencePiece model: a path or its bytes."""
        import tensorflow_text as tf_text

        proto, processor = read_sentencepiece_model(proto)
        pieces = [processor.id_to_piece(i) for i in range(processor.vocab_size())]
        self._sp = tf_text.FastSentencepieceTokenizer(_as_scored(proto))
        self._sp_continuation = None  # made on first use
        self._proto = proto
        self._set_tokens(pieces, processor.unk_id())
        # Which pieces `encode_pieces` splits: a property of the vocabulary,
        # computed once with Python's isdigit, as the official code tests.
        self._digit_comma = tf.constant(
            np.array([len(p) > 1 and p[-1] == "," and p[-2].isdigit() for p in pieces])
        )
        self._comma_id = self.token_to_id(",")

    # --- the official rules, in the graph -------------------------------------
    def preprocess(self, text):
        """The official `preprocess_text(text, lower=lowercase)` of a string tensor.

        Pure-ASCII rows (most English) take a short path with the same
        result: for them NFKD, the combining marks and the UTF-8 checks are
        no-ops and lowercasing is bytewise.
        """
        text = tf.convert_to_tensor(text, tf.string)
        shape = tf.shape(text)
        text = tf.reshape(text, [-1])
        ascii_rows = tf.cast(
            tf.strings.regex_full_match(text, "[\\x00-\\x7f]*"), tf.int32
        )
        parts = tf.dynamic_partition(text, ascii_rows, 2)
        rows = tf.dynamic_partition(tf.range(tf.size(text)), ascii_rows, 2)
        text = tf.dynamic_stitch(
            rows, [self._preprocess_unicode(parts[0]), self._preprocess_ascii(parts[1])]
        )
        return tf.reshape(text, shape)

    def _preprocess_ascii(self, text):
        space = "[\\t-\\r\\x1c-\\x1f ]"  # str.split() whitespace within ASCII
        text = tf.strings.regex_replace(
            text, f"{space}{{2,}}|[\\t-\\r\\x1c-\\x1f]", " "
        )
        text = tf.strings.strip(text)
        return tf.strings.lower(text) if self.lowercase else text

    def _preprocess_unicode(self, text):
        text = unicode_ops.drop_invalid_utf8(text)
        space = unicode_tables.regex_class("whitespace")
        other = unicode_tables.regex_class("other_whitespace")
        # Only what changes is rewritten: runs of two or more, and whitespace
        # other than " " (rewriting every single space is 10x slower).
        text = tf.strings.regex_replace(text, f"{space}{{2,}}|{other}", " ")
        # All whitespace is now " "; absl's ASCII strip takes exactly that.
        text = tf.strings.strip(text)
        text = unicode_ops.python_normalize(text, "NFKD")
        text = tf.strings.regex_replace(
            text, unicode_tables.regex_class("combining"), ""
        )
        if self.lowercase:
            text = unicode_ops.python_lower(text)
        return text

    def tokenize_continuations(self, texts):
        """Ragged int32 ids of texts that continue a word: no "▁" in front.

        SentencePiece marks the start of a text as the start of a word (its
        dummy prefix): "." alone is "▁" "." but "lady." is "▁lady" ".".
        Encoded without that prefix, a text directly after a `[MASK]` gets
        the pieces it has inside the whole text, as in pretraining.

        Example:
        >>> from albert_keras.sample_text import SPM_MODEL_PATH
        >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
        >>> ids = tokenizer.tokenize_continuations(tf.constant([". she"]))
        >>> [tokenizer.id_to_token(i) for i in ids[0].numpy()]
        ['.', '▁she']
        """
        import tensorflow_text as tf_text

        self._require_vocabulary()
        if self._sp_continuation is None:
            with tf.init_scope():  # eager, even inside a traced function
                self._sp_continuation = tf_text.FastSentencepieceTokenizer(
                    _as_scored(self._proto, dummy_prefix=False)
                )
        return self._tokenize(tf.convert_to_tensor(texts, tf.string), continuation=True)

    def _tokenize(self, text, continuation=False):
        sp = self._sp_continuation if continuation else self._sp
        ids = sp.tokenize(self.preprocess(text))
        ids = tf.RaggedTensor.from_row_splits(
            ids.flat_values, tf.cast(ids.row_splits, tf.int64), validate=False
        )
        hit = tf.gather(self._digit_comma, ids.flat_values)
        # Most batches have no piece to re-split: skip the work for them.
        return tf.cond(
            tf.reduce_any(hit),
            lambda: self._split_digit_comma(ids, hit),
            lambda: ids,
        )

    def _split_digit_comma(self, ids, hit):
        """`encode_pieces`: "…5," becomes the stem's own pieces, then ","."""
        flat = ids.flat_values
        at = tf.where(hit)[:, 0]
        stems = tf.gather(self._token_table, tf.gather(flat, at))
        lengths = tf.strings.length(stems) - 1  # the comma is one byte
        stems = tf.strings.substr(stems, tf.zeros_like(lengths), lengths)
        sub = self._sp.tokenize(tf.strings.regex_replace(stems, SPIECE_UNDERLINE, ""))
        sub = concat_rows(
            [sub, tf.fill([tf.shape(at)[0], 1], tf.constant(self._comma_id))]
        )
        sub_lengths = tf.cast(sub.row_lengths(), tf.int64)
        # Every piece becomes itself or its replacement, in place.
        counts = tf.tensor_scatter_nd_update(
            tf.ones_like(flat, tf.int64), at[:, None], sub_lengths
        )
        starts = tf.cumsum(counts, exclusive=True)
        keep = tf.logical_not(hit)
        sub_at = (
            tf.repeat(tf.gather(starts, at), sub_lengths)
            + tf.ragged.range(sub_lengths).flat_values
        )
        values = tf.scatter_nd(
            tf.concat([tf.boolean_mask(starts, keep), sub_at], axis=0)[:, None],
            tf.concat([tf.boolean_mask(flat, keep), sub.flat_values], axis=0),
            [tf.reduce_sum(counts)],
        )
        splits = tf.gather(tf.concat([[0], tf.cumsum(counts)], axis=0), ids.row_splits)
        return tf.RaggedTensor.from_row_splits(values, splits, validate=False)

    def _detokenize(self, ids):
        """As SentencePiece decodes: the preprocessed text (lowercased,
        accents removed)."""
        return self._sp.detokenize(tf.cast(ids, tf.int32))

    # --- saving ---------------------------------------------------------------
    def save_assets(self, dir_path):
        self._require_vocabulary()
        with atomic_write(os.path.join(dir_path, ASSET_FILE), "wb") as f:
            f.write(self._proto)

    def load_assets(self, dir_path):
        self.set_proto(os.path.join(dir_path, ASSET_FILE))


def _as_scored(proto: bytes, dummy_prefix: bool = True) -> bytes:
    """The model with the scores the `sentencepiece` package really uses
    (and, with `dummy_prefix=False`, no "▁" put in front of a text).

    Its Viterbi search scores a user-defined piece (ALBERT's "(", ")", '"',
    "-", ".", ...) `length * max(FLT_MIN, best normal score) - 0.1`, not the
    0 stored in the model, which tf-text's encoder would take as is; path
    scores, and with them the float rounding that settles exact ties, agree
    only with the score the package uses.
    """
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.ParseFromString(proto)
    kinds = model_pb2.ModelProto.SentencePiece
    normal = [p.score for p in model.pieces if p.type == kinds.NORMAL]
    best = max([float(np.finfo(np.float32).tiny), *normal])
    for piece in model.pieces:
        if piece.type == kinds.USER_DEFINED:
            piece.score = len(piece.piece.encode("utf-8")) * best - 0.1
    if not dummy_prefix:
        model.normalizer_spec.add_dummy_prefix = False
    return model.SerializeToString()
