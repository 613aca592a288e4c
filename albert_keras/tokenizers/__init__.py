"""Tokenizers, packing and text-in models (see README.md here).

The names are imported on first use: the vocabulary modules
(`vocabulary_files`, `vocabulary`) load without TensorFlow, so data creation
and `albert-keras vocab` can read and check a vocabulary without it.
"""

import importlib as _importlib
import importlib.util as _importlib_util

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


def __getattr__(name):
    # PEP 562: the TensorFlow layers are imported when first asked for.
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and _importlib_util.find_spec(f"{__name__}.{name}"):
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'albert_keras.tokenizers' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
