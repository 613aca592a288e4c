"""`AlbertWordPieceTokenizer`: the Chinese models' BERT tokenization, in-graph."""

from __future__ import annotations

import os

import keras
import tensorflow as tf

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertWordPieceTokenizer(keras.layers.Layer):
    """Text -> ids with a WordPiece `vocab.txt`, as the official tokenizer without spm.

    The `*_zh` releases ship a WordPiece vocabulary (21128 entries) instead of
    a SentencePiece model; the official `FullTokenizer` then runs BERT's
    basic tokenization (CJK ideographs split one per token, punctuation split,
    lowercasing and accent stripping) and greedy longest-match WordPiece with
    `[UNK]` (words over 200 characters become `[UNK]`). This is that, on
    tensorflow-text's `BertTokenizer`, in the graph.

    Args:
        vocabulary: path of `vocab.txt` (one token per line) or a list.
        lowercase: lowercase and strip accents (the released models do).

    Example:
    >>> tokenizer = AlbertWordPieceTokenizer("vocab_chinese.txt")  # doctest: +SKIP
    >>> tokenizer(["中文 text"])  # doctest: +SKIP
    """

    def __init__(self, vocabulary=None, lowercase=True, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self.lowercase = lowercase
        self.vocabulary = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def set_vocabulary(self, vocabulary):
        import tensorflow_text as tf_text

        if isinstance(vocabulary, (str, os.PathLike)):
            try:
                with open(vocabulary, encoding="utf-8") as f:
                    vocabulary = [line.strip().split()[0] for line in f if line.strip()]
            except (OSError, UnicodeDecodeError) as e:
                raise ValueError(
                    f"Cannot read the vocabulary {vocabulary!r}: {e}"
                ) from None
        # As the official load_vocab: the first occurrence of a token wins.
        seen, tokens = set(), []
        for token in vocabulary:
            if token not in seen:
                seen.add(token)
                tokens.append(token)
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]", "[MASK]") if t not in seen]
        if missing:
            raise ValueError(
                f"The WordPiece vocabulary lacks special tokens {missing}; ALBERT "
                f"needs {list(SPECIAL_TOKENS[1:])} (as the release's "
                "vocab_chinese.txt has)."
            )
        self.vocabulary = tokens
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(tokens), tf.range(len(tokens), dtype=tf.int64)
            ),
            default_value=tokens.index("[UNK]"),
        )
        self._table = table
        self._bert = tf_text.BertTokenizer(
            table,
            token_out_type=tf.int64,
            unknown_token="[UNK]",
            # Lowercasing is ours (below): tf-text's folds with NFKC, which
            # turns fullwidth punctuation into ASCII; the official code does not.
            lower_case=False,
            max_chars_per_token=200,
            max_bytes_per_word=1000,
        )

    @property
    def resources(self):
        """The tf-text tokenizer (a `tf.Module` holding the table), for exports."""
        return [self._bert]

    def vocabulary_size(self) -> int:
        return len(self.vocabulary)

    def id_to_token(self, token_id: int) -> str:
        return self.vocabulary[token_id]

    def token_to_id(self, token: str) -> int:
        return self.vocabulary.index(token)

    @property
    def special_token_ids(self) -> dict:
        names = ("pad", "unk", "cls", "sep", "mask")
        return {
            n: self.vocabulary.index(t)
            for n, t in zip(names, SPECIAL_TOKENS, strict=True)
            if t in self.vocabulary
        }

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (str, bytes, list, tuple)):
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, *args, **kwargs)

    def preprocess(self, text):
        """The official `_clean_text`, then lowercasing and accent stripping."""
        import tensorflow_text as tf_text

        text = tf.strings.regex_replace(text, r"[\t\n\r\p{Zs}]", " ")
        text = tf.strings.regex_replace(text, r"[\x{0}\x{fffd}\p{C}]", "")
        if self.lowercase:
            text = tf.strings.lower(text, encoding="utf-8")
            text = tf_text.normalize_utf8(text, "NFD")
            text = tf.strings.regex_replace(text, r"\p{Mn}", "")
        return text

    def call(self, inputs):
        text = tf.reshape(tf.convert_to_tensor(inputs), [-1])
        ids = self._bert.tokenize(self.preprocess(text)).merge_dims(1, 2)
        return tf.cast(ids, tf.int32)

    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(self.vocabulary) + "\n")

    def load_assets(self, dir_path):
        self.set_vocabulary(os.path.join(dir_path, "vocab.txt"))

    def get_config(self):
        return {**super().get_config(), "lowercase": self.lowercase}
