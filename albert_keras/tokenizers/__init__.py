"""Tokenizers, packing and text-in models (see README.md here)."""

from albert_keras.tokenizers.albert_packer import AlbertPacker
from albert_keras.tokenizers.albert_span_packer import AlbertSpanPacker
from albert_keras.tokenizers.albert_text_model import AlbertTextModel, with_tokenizer
from albert_keras.tokenizers.albert_tokenizer import AlbertTokenizer
from albert_keras.tokenizers.albert_wordpiece_tokenizer import AlbertWordPieceTokenizer
from albert_keras.tokenizers.vocabulary import (
    build_wordpiece_vocabulary,
    train_sentencepiece,
)
from albert_keras.tokenizers.vocabulary_files import load_tokenizer

__all__ = [
    "AlbertPacker",
    "AlbertSpanPacker",
    "AlbertTextModel",
    "AlbertTokenizer",
    "AlbertWordPieceTokenizer",
    "build_wordpiece_vocabulary",
    "load_tokenizer",
    "train_sentencepiece",
    "with_tokenizer",
]
