"""`SentencePieceEncoder`: corpus lines -> official ALBERT ids, without TensorFlow.

What data creation needs from a SentencePiece vocabulary, with the
`sentencepiece` package the official code itself calls: the text goes
through the official `preprocess_text`, a batch of lines is encoded in C++
(`SentencePieceProcessor.encode` on a list, in `num_threads` threads), and
the official `encode_pieces` re-split of pieces ending in a digit and ","
is applied to the few pieces that need it. Loading TensorFlow costs more
than tokenizing a corpus of megabytes this way, so `CorpusTokenizer` takes
this path for SentencePiece vocabularies; the in-graph `AlbertTokenizer`
gives the same ids (tested) for `tf.data` and exported models.
"""

from __future__ import annotations

import itertools

import numpy as np

from albert_keras.tokenizers.sentencepiece_text import preprocess_text

SPIECE_UNDERLINE = "\u2581"


class SentencePieceEncoder:
    """Lines -> ids exactly as the official `albert.tokenization` (1.1) makes them.

    1. `preprocess_text(line, lower=lowercase)`; pure-ASCII lines (most
       English) skip NFKD and the combining-mark filter, which leave them
       unchanged.
    2. `SentencePieceProcessor.encode` on a list of lines.
    3. `encode_pieces` as it runs under Python 3: a piece ending in a digit
       and "," becomes the pieces of its text without "▁" (SentencePiece
       puts a "▁" back in front: the official check that would drop it
       compares `str` to `bytes` and never holds), then ",".

    Args:
        model: the SentencePiece model, a path or its bytes, with the
            official layout (`<pad>`=0, `[CLS]`, `[SEP]`, `[MASK]`; checked).
        lowercase: bool. The official `do_lower_case`.
        num_threads: int. C++ threads encoding a batch.
        batch_size: int. Lines per `encode` call (their ids are Python lists
            until then).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> encoder = SentencePieceEncoder(SPM_MODEL_PATH)
    >>> ids, lengths = encoder.encode(["Emma Woodhouse, handsome", "  "])
    >>> [encoder.id_to_token(i) for i in ids], lengths.tolist()
    (['▁emma', '▁woodhouse', ',', '▁handsome'], [4, 0])
    """

    def __init__(
        self,
        model,
        lowercase: bool = True,
        *,
        num_threads: int = 1,
        batch_size: int = 8192,
    ):
        from albert_keras.tokenizers.vocabulary_files import read_sentencepiece_model

        _, self.processor = read_sentencepiece_model(model)
        self.lowercase = bool(lowercase)
        self.num_threads = max(1, int(num_threads))
        self.batch_size = max(1, int(batch_size))
        self.pieces = self.processor.id_to_piece(list(range(len(self.processor))))
        self._unk_id = self.processor.unk_id()
        # Which pieces `encode_pieces` re-splits: a property of the
        # vocabulary, tested with Python's isdigit as the official code does.
        self._digit_comma = np.array(
            [len(p) > 1 and p[-1] == "," and p[-2].isdigit() for p in self.pieces]
        )
        self._comma_id = self.token_to_id(",")
        self._splits = {}  # piece id -> its re-split ids

    # --- vocabulary (the API `CorpusTokenizer` reads from every tokenizer) ---
    def vocabulary_size(self) -> int:
        """Number of pieces, special tokens included."""
        return len(self.pieces)

    def id_to_token(self, token_id: int) -> str:
        """The piece of an id."""
        return self.pieces[int(token_id)]

    def token_to_id(self, token: str) -> int:
        """The id of a piece (`<unk>`'s for a string that is not one)."""
        return self.processor.piece_to_id(token)

    @property
    def special_token_ids(self) -> dict:
        """`pad`, `unk`, `cls`, `sep`, `mask` ids (`pad` 0: the official padding)."""
        from albert_keras.tokenizers.vocabulary_files import SENTENCEPIECE_SPECIALS

        ids = {n: self.token_to_id(p) for n, p in SENTENCEPIECE_SPECIALS.items()}
        return {**ids, "pad": 0, "unk": self._unk_id}

    # --- the official rules -------------------------------------------------
    def preprocess(self, lines) -> list[str]:
        """The official `preprocess_text(line, lower=lowercase)` of each line."""
        lower = self.lowercase
        out = []
        for line in lines:
            if line.isascii():
                line = " ".join(line.split())
                out.append(line.lower() if lower else line)
            else:
                out.append(preprocess_text(line, lower))
        return out

    def encode(self, lines) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every line, back to back, and the number of ids per line.

        Args:
            lines: list of str.

        Returns: `(ids, lengths)`: int32 [total], int64 [len(lines)].
        """
        ids, lengths = [], []
        for start in range(0, len(lines), self.batch_size):
            texts = self.preprocess(lines[start : start + self.batch_size])
            rows = self.processor.encode(
                texts, out_type=int, num_threads=self.num_threads
            )
            counts = np.fromiter(map(len, rows), np.int64, len(rows))
            flat = np.fromiter(
                itertools.chain.from_iterable(rows), np.int32, int(counts.sum())
            )
            flat, counts = self._split_digit_comma(flat, counts)
            ids.append(flat)
            lengths.append(counts)
        if not ids:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        return np.concatenate(ids), np.concatenate(lengths)

    def _split_digit_comma(self, flat, counts):
        """`encode_pieces`: each "…5," piece becomes its stem's pieces, then ","."""
        at = np.flatnonzero(self._digit_comma[flat])
        if not len(at):  # the usual case: nothing to re-split
            return flat, counts
        replacements = [self._split(int(piece)) for piece in flat[at]]
        widths = np.ones(len(flat), np.int64)
        widths[at] = [len(r) for r in replacements]
        ends = np.cumsum(widths)
        out = np.repeat(flat, widths)
        starts = ends[at] - widths[at]
        for position, replacement in zip(starts, replacements, strict=True):
            out[position : position + len(replacement)] = replacement
        # New line lengths: the widths summed over each line's pieces.
        line_ends = np.concatenate([[0], ends])[np.cumsum(counts)]
        return out, np.diff(np.concatenate([[0], line_ends]))

    def _split(self, piece_id):
        if piece_id not in self._splits:
            stem = self.pieces[piece_id][:-1].replace(SPIECE_UNDERLINE, "")
            self._splits[piece_id] = self.processor.encode(stem) + [self._comma_id]
        return self._splits[piece_id]

    def __call__(self, lines) -> list[list[int]]:
        """Ids per line, as lists (`encode` gives the flat arrays)."""
        lines = list(lines)
        if not lines:
            return []
        ids, lengths = self.encode(lines)
        return [row.tolist() for row in np.split(ids, np.cumsum(lengths)[:-1])]
