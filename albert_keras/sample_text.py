"""The embedded public-domain corpus: paths and a small batch of real sentences."""

from __future__ import annotations

import gzip
import os

import numpy as np

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CORPUS_PATH = os.path.join(DATA_DIR, "en_austen.txt.gz")
SPM_MODEL_PATH = os.path.join(DATA_DIR, "austen-8k.model")


def read_paragraphs(limit: int | None = None) -> list[str]:
    """Non-empty lines (paragraphs) of the embedded Austen corpus."""
    paragraphs = []
    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if len(line.split()) >= 8:
                paragraphs.append(line)
                if limit and len(paragraphs) >= limit:
                    break
    return paragraphs


def sample_batch(batch: int, length: int, vocab_size: int):
    """`batch` paragraphs packed as `[CLS] text [SEP]`, padded to `length`.

    Tokenized with the embedded SentencePiece model (8000 pieces) on
    lowercased text. For a smaller `vocab_size` (`albert_tiny` has 1000),
    pieces past it become `<unk>` (id 1), so the ids always fit the model.
    Returns (inputs, paragraphs).

    Example:
    >>> inputs, paragraphs = sample_batch(2, 16, vocab_size=1000)
    >>> int(inputs["token_ids"].max()) < 1000
    True
    """
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=SPM_MODEL_PATH)
    paragraphs = read_paragraphs(limit=batch)
    token_ids = np.zeros((batch, length), "int32")
    padding_mask = np.zeros((batch, length), "int32")
    for row, text in enumerate(paragraphs):
        pieces = processor.encode(text.lower())[: length - 2]
        ids = [2] + [i if i < vocab_size else 1 for i in pieces] + [3]
        token_ids[row, : len(ids)] = ids
        padding_mask[row, : len(ids)] = 1
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": padding_mask,
    }
    return inputs, paragraphs
