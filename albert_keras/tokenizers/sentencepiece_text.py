"""`preprocess_text`: the official ALBERT text normalization, in Python.

Used by `albert_keras.tokenizers.vocabulary` (the vocabulary trainer feeds
SentencePiece what `AlbertTokenizer` will feed it) and by
`albert_keras.pretraining.sentencepiece_encoder` (data creation without
TensorFlow). `AlbertTokenizer` does the same in the TensorFlow graph.
"""

from __future__ import annotations

import unicodedata


def preprocess_text(text: str, lower: bool = True) -> str:
    """The official `preprocess_text` of albert-tensorflow 1.1 (remove_space=True).

    Whitespace collapsed, NFKD, combining marks removed, optional lowercase.
    That release does not rewrite `` and '' (later GitHub versions do).

    Example:
    >>> preprocess_text("  Café   AU lait ")
    'cafe au lait'
    """
    text = " ".join(text.strip().split())
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower() if lower else text
