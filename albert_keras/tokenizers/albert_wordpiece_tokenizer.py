"""`AlbertWordPieceTokenizer`: the Chinese models' BERT tokenization, in-graph."""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from albert_keras.atomic_files import atomic_write
from albert_keras.tokenizers import unicode_ops, unicode_tables
from albert_keras.tokenizers.tokenizer_base import AlbertTokenizerBase
from albert_keras.tokenizers.vocabulary_files import (
    WORDPIECE_SPECIALS,
    read_wordpiece_vocabulary,
)

ASSET_FILE = "vocab.txt"
MAX_CHARS_PER_WORD = 200  # the official WordpieceTokenizer's limit


def basic_tokenize(text, lowercase: bool = True):
    """The official `BasicTokenizer`, in the graph: words joined by single spaces.

    Args:
        text: string tensor.
        lowercase: `do_lower_case` (lowercasing and accent stripping).

    Returns: string tensor of the same shape; `tf.strings.split` gives the words.

    Example:
    >>> basic_tokenize(tf.constant(["Héllo,世界"])).numpy()[0].decode()
    'hello ,  世  界 '
    """
    cls = unicode_tables.regex_class
    text = unicode_ops.drop_invalid_utf8(text)
    text = tf.strings.regex_replace(text, cls("clean_drop"), "")
    text = tf.strings.regex_replace(text, cls("clean_space"), " ")
    text = tf.strings.regex_replace(text, f"({cls('cjk')})", r" \1 ")
    if lowercase:
        text = unicode_ops.python_lower(text)
        text = unicode_ops.python_normalize(text, "NFD")
        text = tf.strings.regex_replace(text, cls("nonspacing_mark"), "")
    return tf.strings.regex_replace(text, f"({cls('punctuation')})", r" \1 ")


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertWordPieceTokenizer(AlbertTokenizerBase):
    """Text -> ids with a WordPiece `vocab.txt`, as the official tokenizer without spm.

    The `*_zh` releases ship a WordPiece vocabulary (`vocab_chinese.txt`,
    21128 tokens) instead of a SentencePiece model; the official
    `FullTokenizer` then runs BERT's `BasicTokenizer` and
    `WordpieceTokenizer`. This layer does the same in the TensorFlow graph:

    1. `_clean_text`: NUL, U+FFFD and control/format characters (Cc, Cf but
       tab, newline, return) dropped; whitespace (Zs, tab, newline, return)
       to spaces.
    2. A space on each side of every CJK ideograph (`_is_chinese_char`).
    3. With `lowercase`: `str.lower()`, NFD, nonspacing marks (Mn) dropped.
    4. Each punctuation character (ASCII non-alphanumerics and P*) apart.
    5. Greedy longest-match-first WordPiece with "##" continuations; a word
       that cannot be covered, or is over 200 characters, is one `[UNK]`.

    Character classes come from Python's `unicodedata` (as the official code
    decides), not from RE2's or ICU's tables; tf-text's `BertTokenizer` is not
    used because its lowercasing folds NFKC (fullwidth "，" would become ",").
    Bytes that are not UTF-8 are dropped, as `convert_to_unicode` does.

    Args:
        vocabulary: path of a `vocab.txt` (one token per line), or a list.
            Must hold `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`.
        lowercase: `do_lower_case` (the released models: True).

    Call arguments:
        inputs: string tensor [batch] (or a scalar, or a Python list of str).

    Returns: ragged int32 ids [batch, None] (1-D ids for a scalar).

    Example:
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "文", "text"]
    >>> tokenizer = AlbertWordPieceTokenizer(vocab)
    >>> tokenizer(["中文 Text!"]).to_list()
    [[5, 6, 7, 1]]
    """

    _SPECIALS = WORDPIECE_SPECIALS
    _NO_VOCABULARY = "no vocabulary yet: pass `vocabulary` (a vocab.txt path or a list)"

    def __init__(self, vocabulary=None, lowercase=True, **kwargs):
        super().__init__(lowercase=lowercase, **kwargs)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    @property
    def vocabulary(self) -> list[str] | None:
        """The tokens in id order (None before a vocabulary is loaded)."""
        return self._tokens

    def set_vocabulary(self, vocabulary):
        """Loads (and checks) the vocabulary: a `vocab.txt` path or a token list."""
        import tensorflow_text as tf_text

        tokens = read_wordpiece_vocabulary(vocabulary)
        try:
            wordpiece = tf_text.FastWordpieceTokenizer(
                tokens,
                token_out_type=tf.int32,
                unknown_token="[UNK]",
                no_pretokenization=True,
                support_detokenization=False,
                # Longer words are [UNK] before they get here (by characters,
                # as the official code counts); 4 bytes per character at most.
                max_bytes_per_word=4 * MAX_CHARS_PER_WORD,
            )
        except Exception as e:  # the builder's errors name no file
            raise ValueError(
                f"tf-text cannot build a WordPiece model from this vocabulary: {e}"
            ) from None
        self._wordpiece = wordpiece
        self._set_tokens(tokens)

    # --- the official rules, in the graph -------------------------------------
    def preprocess(self, text):
        """Basic tokenization: the text with single spaces between the words."""
        return basic_tokenize(text, self.lowercase)

    def tokenize_words(self, inputs):
        """The basic tokenizer's words (ragged strings) of a batch of texts."""
        inputs = tf.convert_to_tensor(inputs, tf.string)
        # Only " " separates words now; absl's ASCII split takes exactly that.
        return tf.strings.split(self.preprocess(tf.reshape(inputs, [-1])))

    def _tokenize(self, texts):
        words = self.tokenize_words(texts)
        too_long = tf.strings.length(words.flat_values, "UTF8_CHAR") > (
            MAX_CHARS_PER_WORD
        )
        flat = tf.where(too_long, "[UNK]", words.flat_values)
        pieces = self._wordpiece.tokenize(flat)
        return words.with_flat_values(pieces).merge_dims(1, 2)

    def _detokenize(self, ids):
        """Tokens joined by spaces, "##" pieces glued to the one before."""
        text = tf.strings.reduce_join(
            tf.gather(self._token_table, ids), axis=-1, separator=" "
        )
        return tf.strings.regex_replace(text, " ##", "")

    # --- saving ---------------------------------------------------------------
    def save_assets(self, dir_path):
        self._require_vocabulary()
        with atomic_write(os.path.join(dir_path, ASSET_FILE)) as f:
            f.write("\n".join(self.vocabulary) + "\n")

    def load_assets(self, dir_path):
        self.set_vocabulary(os.path.join(dir_path, ASSET_FILE))
