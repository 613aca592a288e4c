"""`AlbertTokenizer`: the official ALBERT SentencePiece tokenization, in-graph."""

from __future__ import annotations

import os

import keras
import tensorflow as tf

# Python's str.split() whitespace (what the official preprocess_text collapses),
# which RE2's \s does not fully cover.
_WHITESPACE = (
    r"[\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+"
)
# Combining marks (what unicodedata.combining() != 0 removes after NFKD).
_COMBINING = r"[\p{Mn}\p{Me}]"
SPIECE_UNDERLINE = "\u2581"


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTokenizer(keras.layers.Layer):
    """Text -> ALBERT ids with a SentencePiece model, exactly as `tokenization.py`.

    Runs in the TensorFlow graph (usable in `tf.data` and exported models): the
    official `preprocess_text` of `albert-tensorflow` 1.1 (whitespace
    collapsed, NFKD, combining marks removed, optional lowercase; that
    release does not rewrite `` and '' as later GitHub versions do),
    SentencePiece, and the
    official `encode_pieces` rule that re-encodes a piece ending in a digit and
    a comma with the comma apart. The model file is a Keras asset, so `.keras`
    files and SavedModels carry it.

    Args:
        proto: the SentencePiece model, as a path or its bytes.
        lowercase: lowercase first (the released English models do).

    Call arguments:
        inputs: string tensor [batch] (or a scalar).

    Returns: ragged int32 ids [batch, None].

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> tokenizer(["Emma Woodhouse"]).to_list()  # doctest: +SKIP
    """

    def __init__(self, proto=None, lowercase=True, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self.lowercase = lowercase
        self._proto = None
        if proto is not None:
            self.set_proto(proto)

    def set_proto(self, proto):
        import tensorflow_text as tf_text

        if isinstance(proto, (str, os.PathLike)):
            try:
                with open(proto, "rb") as f:
                    proto = f.read()
            except OSError as e:
                raise ValueError(
                    f"Cannot read the SentencePiece model {proto!r}: {e.strerror}"
                ) from None
        self._proto = bytes(proto)
        try:
            self._sp = tf_text.SentencepieceTokenizer(
                model=self._proto, out_type=tf.string
            )
        except Exception as e:  # the op says little: name the fix
            raise ValueError(
                "Not a SentencePiece model (use the release's 30k-clean.model or "
                f"one made by `albert-keras vocab`): {e}"
            ) from None
        import sentencepiece as spm

        self._sp_ids = tf_text.SentencepieceTokenizer(
            model=self._proto, out_type=tf.int32
        )
        processor = spm.SentencePieceProcessor(model_proto=self._proto)
        pieces = [processor.id_to_piece(i) for i in range(processor.vocab_size())]
        self._digit_comma = tf.constant(
            [len(p) > 1 and p[-1] == "," and p[-2].isdigit() for p in pieces]
        )
        self._comma_id = processor.piece_to_id(",")
        for piece, expected in (
            ("<pad>", 0),
            ("[CLS]", 2),
            ("[SEP]", 3),
            ("[MASK]", 4),
        ):
            found = int(self._sp.string_to_id(piece))
            if found != expected:
                raise ValueError(
                    f"The SentencePiece model lacks the ALBERT special tokens: {piece} "
                    f"has id {found}, expected {expected}."
                )

    @property
    def resources(self):
        """The tf-text SentencePiece op holders (`tf.Module`s), for exports."""
        return [self._sp, self._sp_ids]

    # --- vocabulary ---------------------------------------------------------
    def vocabulary_size(self) -> int:
        return int(self._sp.vocab_size())

    def id_to_token(self, token_id: int) -> str:
        return self._sp.id_to_string(token_id).numpy().decode("utf-8")

    def token_to_id(self, token: str) -> int:
        return int(self._sp.string_to_id(token))

    @property
    def special_token_ids(self) -> dict:
        return {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}

    # --- the official rules, in the graph ------------------------------------
    def preprocess(self, text):
        text = tf.strings.regex_replace(text, _WHITESPACE, " ")
        text = tf.strings.regex_replace(text, r"^ | $", "")
        text = self._normalize(text)
        if self.lowercase:
            text = tf.strings.lower(text, encoding="utf-8")
        return text

    @staticmethod
    def _normalize(text):
        import tensorflow_text as tf_text

        text = tf_text.normalize_utf8(text, "NFKD")
        return tf.strings.regex_replace(text, _COMBINING, "")

    def tokenize_pieces(self, inputs):
        """Official pieces (ragged strings) of a batch of texts."""
        return tf.ragged.map_flat_values(self._sp.id_to_string, self._tokenize(inputs))

    def _tokenize(self, text):
        ids = self._sp_ids.tokenize(self.preprocess(tf.convert_to_tensor(text)))
        flat = ids.flat_values
        # The `encode_pieces` rule: a piece "…5," is re-encoded as "…5" without
        # "▁", then ",". Which pieces qualify is a property of the vocabulary,
        # computed once with Python's isdigit (as the official code tests).
        # (Under Python 3 the official check for a leading "▁" never holds, so
        # the re-encoded pieces keep theirs.)
        hit = tf.gather(self._digit_comma, flat)
        hit_index = tf.where(hit)[:, 0]
        stems = self._sp.id_to_string(tf.gather(flat, hit_index))
        lengths = tf.strings.length(stems) - 1  # the comma is one byte
        stems = tf.strings.substr(stems, tf.zeros_like(lengths), lengths)
        sub = self._sp_ids.tokenize(
            tf.strings.regex_replace(stems, SPIECE_UNDERLINE, "")
        )
        comma = tf.fill([tf.shape(stems)[0], 1], self._comma_id)
        sub = tf.concat([sub, tf.RaggedTensor.from_tensor(comma)], axis=1)
        # Every flat id becomes itself or its replacement: sort all outputs by
        # (piece index, position), then rebuild the rows.
        keep = tf.where(tf.logical_not(hit))[:, 0]
        positions = tf.ragged.range(sub.row_lengths()).flat_values
        keys = tf.concat(
            [keep * 1024, tf.repeat(hit_index, sub.row_lengths()) * 1024 + positions],
            axis=0,
        )
        values = tf.concat([tf.gather(flat, keep), sub.flat_values], axis=0)
        values = tf.gather(values, tf.argsort(keys, stable=True))
        per_piece = tf.tensor_scatter_nd_update(
            tf.ones_like(flat, dtype=tf.int64), hit_index[:, None], sub.row_lengths()
        )
        per_text = tf.RaggedTensor.from_row_lengths(per_piece, ids.row_lengths())
        return tf.RaggedTensor.from_row_lengths(values, tf.reduce_sum(per_text, axis=1))

    def __call__(self, inputs, *args, **kwargs):
        # Python strings and lists are welcome, as in tf.data map functions.
        if isinstance(inputs, (str, bytes, list, tuple)):
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        scalar = isinstance(inputs, str) or (
            hasattr(inputs, "shape") and len(inputs.shape) == 0
        )
        text = tf.reshape(tf.convert_to_tensor(inputs), [-1])
        ids = self._tokenize(text)
        return ids[0] if scalar else ids

    def detokenize(self, ids):
        return self._sp.detokenize(
            tf.ragged.map_flat_values(self._sp.id_to_string, ids)
        )

    # --- saving --------------------------------------------------------------
    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, "spiece.model"), "wb") as f:
            f.write(self._proto)

    def load_assets(self, dir_path):
        self.set_proto(os.path.join(dir_path, "spiece.model"))

    def get_config(self):
        return {**super().get_config(), "lowercase": self.lowercase}
