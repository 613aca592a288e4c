"""`read_documents`: a pretraining text file -> documents of segments.

The input format of the official `create_pretraining_data.py`: one segment
per line (ideally a sentence; the corpora in `shared/data/pretrain` and the
embedded one have a paragraph per line), a blank (or whitespace-only) line
between documents. `split_sentences` cuts paragraph lines into sentences so
segment pairs can also be cut inside a paragraph.
"""

from __future__ import annotations

import gzip
import os
import re

_SENTENCE_END = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMs\.)(?<=[.!?])"
    r"[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])"
)


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of an English paragraph: cuts after . ! ? before a capital or digit.

    Example:
    >>> split_sentences("It was late. Mr. Knightley came in! Emma smiled.")
    ['It was late.', 'Mr. Knightley came in!', 'Emma smiled.']
    """
    return [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]


def read_documents(path: str, sentences: bool = False) -> list[list[str]]:
    """Documents of a UTF-8 text file: non-empty lines, split at blank lines.

    Args:
        path: the file (`.gz` files are decompressed).
        sentences: split each line into sentences (`split_sentences`).

    Returns: list of documents, each a list of segments (stripped lines).

    Raises:
        ValueError: the file is missing, a folder, unreadable or not UTF-8;
            the message says which byte and line, and how to convert it.

    Example:
    >>> read_documents("corpus.txt")  # doctest: +SKIP
    [['First paragraph.', 'Second one.'], ['Next document.']]
    """
    if os.path.isdir(path):
        raise ValueError(
            f"{path!r} is a folder; pass the text files in it (e.g. '{path}/*.txt')."
        )
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise ValueError(f"Cannot read {path!r}: {e.strerror or e}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}, line {line}: "
            f"{raw[e.start : e.start + 4]!r}). Convert it first, e.g. "
            f"`iconv -f latin1 -t utf-8 {path} > converted.txt`."
        ) from None
    documents, current = [], []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            current.extend(split_sentences(line) if sentences else [line])
        elif current:
            documents.append(current)
            current = []
    if current:
        documents.append(current)
    return documents
