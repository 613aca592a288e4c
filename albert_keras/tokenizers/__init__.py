"""Tokenizers, packing and text-in models (see README.md here)."""

from albert_keras.tokenizers.albert_packer import AlbertPacker
from albert_keras.tokenizers.albert_text_model import AlbertTextModel
from albert_keras.tokenizers.albert_tokenizer import AlbertTokenizer
from albert_keras.tokenizers.albert_wordpiece_tokenizer import AlbertWordPieceTokenizer

__all__ = [
    "AlbertPacker",
    "AlbertTextModel",
    "AlbertTokenizer",
    "AlbertWordPieceTokenizer",
]
