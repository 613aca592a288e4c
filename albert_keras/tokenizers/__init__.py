"""Tokenizers and packing (see README.md here).

The names are imported on first use: the vocabulary modules
(`vocabulary_files`, `vocabulary`) load without TensorFlow, so data creation
and `albert-keras vocab` can read and check a vocabulary without it.
"""

from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes

_LAZY = {
    "AlbertPacker": "albert_keras.tokenizers.albert_packer",
    "AlbertSpanPacker": "albert_keras.tokenizers.albert_span_packer",
    "AlbertTokenizer": "albert_keras.tokenizers.albert_tokenizer",
    "AlbertWordPieceTokenizer": "albert_keras.tokenizers.albert_wordpiece_tokenizer",
    "build_wordpiece_vocabulary": "albert_keras.tokenizers.vocabulary",
    "load_tokenizer": "albert_keras.tokenizers.vocabulary_files",
    "train_sentencepiece": "albert_keras.tokenizers.vocabulary",
}

__all__ = [
    "AlbertPacker",
    "AlbertSpanPacker",
    "AlbertTokenizer",
    "AlbertWordPieceTokenizer",
    "build_wordpiece_vocabulary",
    "load_tokenizer",
    "train_sentencepiece",
]


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
