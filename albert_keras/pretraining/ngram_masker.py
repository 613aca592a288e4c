"""`NgramMasker`: ALBERT's whole-word n-gram masking, on batches of id rows.

The official `create_masked_lm_predictions`, in id space and seeded. Word
pieces are grouped into words (a SentencePiece piece that starts a word by the
official `_is_start_piece_sp` rule, or a WordPiece piece without "##", plus
the pieces that follow it); candidate n-grams start at every word in random
order, n is drawn with p(n) proportional to 1/n (n <= `ngram`) and shortened
while it would overrun the budget of `min(max_predictions_per_seq,
max(1, round(length * masked_lm_prob)))` pieces; spans that overlap an earlier
one are skipped. Of the chosen pieces 80% become [MASK], 10% a random id of
the vocabulary and 10% stay. Unlike the official code (whose n-gram draw uses
NumPy's global, unseeded generator) every draw comes from the `rng` passed in.
"""

from __future__ import annotations

import numpy as np

# The official `_is_start_piece_sp` sets. Its punctuation string spells the
# apostrophe as `\"`, so "'" is not in it: a piece like "'s" starts a word.
_SPECIAL_PIECES = set('!"#$%&"()*+,-./:;?@[\\]^_`{|}~')
_ENGLISH_OR_SPECIAL = set("abcdefghijklmnopqrstuvwxyz") | _SPECIAL_PIECES


def is_start_piece_sentencepiece(piece: str) -> bool:
    """The official `_is_start_piece_sp`: does this SentencePiece piece begin a word?

    Pieces with a leading "▁", `<...>` pieces, single punctuation marks and
    any piece with a character outside a-z (digits, accented or foreign
    letters) begin a word.
    """
    return (
        piece.startswith(("\u2581", "<"))
        or piece in _SPECIAL_PIECES
        or not all(c.lower() in _ENGLISH_OR_SPECIAL for c in piece)
    )


def is_start_piece_wordpiece(piece: str) -> bool:
    """The official `_is_start_piece_bert`: a WordPiece without "##" begins a word."""
    return not piece.startswith("##")


class NgramMasker:
    """Whole-word n-gram masking of `[CLS] a [SEP] b [SEP]` id rows (ALBERT paper).

    Args:
        vocabulary_size: int. Random replacements are drawn from
            `[0, vocabulary_size)`, as the official code draws from the whole
            vocabulary.
        word_starts: bool array [vocabulary_size]: which ids begin a word
            (see `word_starts_of`). Optional when every call passes
            `boundary` (e.g. the `token_boundary` feature of unmasked records).
        masked_lm_prob: float. Share of the pieces of a row to predict.
        max_predictions_per_seq: int. At most this many per row.
        ngram: int. Longest span in words; p(n) is proportional to 1/n.
        do_whole_word_mask: bool. Mask whole words (the official default);
            False makes every piece a candidate of its own.
        mask_id, cls_id, sep_id: int. The special ids (2, 3, 4 in the
            SentencePiece releases).

    Example:
    >>> import numpy as np
    >>> masker = NgramMasker(100, np.ones(100, bool), max_predictions_per_seq=4)
    >>> ids = np.array([[2, 10, 11, 12, 13, 3, 14, 15, 16, 17, 3, 0]])
    >>> out = masker.mask(ids, np.array([11]), np.random.default_rng(0))
    >>> int(out["masked_lm_weights"].sum())
    2
    """

    def __init__(
        self,
        vocabulary_size: int,
        word_starts=None,
        *,
        masked_lm_prob: float = 0.15,
        max_predictions_per_seq: int = 20,
        ngram: int = 3,
        do_whole_word_mask: bool = True,
        mask_id: int = 4,
        cls_id: int = 2,
        sep_id: int = 3,
    ):
        if not 0.0 <= masked_lm_prob <= 1.0:
            raise ValueError(
                "`masked_lm_prob` must be in [0, 1]. "
                f"Received: masked_lm_prob={masked_lm_prob}"
            )
        if max_predictions_per_seq < 1 or ngram < 1:
            raise ValueError(
                "`max_predictions_per_seq` and `ngram` must be at least 1. Received: "
                f"max_predictions_per_seq={max_predictions_per_seq}, ngram={ngram}"
            )
        self.vocabulary_size = int(vocabulary_size)
        self.word_starts = None
        if word_starts is not None:
            self.word_starts = np.asarray(word_starts, bool)
            if self.word_starts.shape != (self.vocabulary_size,):
                raise ValueError(
                    "`word_starts` needs one entry per id. Received: shape "
                    f"{self.word_starts.shape}, vocabulary_size={vocabulary_size}"
                )
        self.masked_lm_prob = float(masked_lm_prob)
        self.max_predictions_per_seq = int(max_predictions_per_seq)
        self.ngram = int(ngram)
        self.do_whole_word_mask = bool(do_whole_word_mask)
        self.mask_id, self.cls_id, self.sep_id = int(mask_id), int(cls_id), int(sep_id)
        pvals = 1.0 / np.arange(1, self.ngram + 1)
        self._cdf = np.cumsum(pvals / pvals.sum())
        self._cdf[-1] = 1.0

    @staticmethod
    def word_starts_of(pieces, sentencepiece: bool = True) -> np.ndarray:
        """The official start-piece rule applied to every piece of a vocabulary."""
        rule = (
            is_start_piece_sentencepiece if sentencepiece else is_start_piece_wordpiece
        )
        return np.array([rule(p) for p in pieces], bool)

    def token_boundary(self, ids, lengths) -> np.ndarray:
        """The official `token_boundary` feature: 1 at [CLS], [SEP] and word starts."""
        ids = np.asarray(ids)
        valid = np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]
        special = (ids == self.cls_id) | (ids == self.sep_id)
        starts = self.word_starts[np.clip(ids, 0, self.vocabulary_size - 1)]
        return ((special | starts) & valid).astype(np.int32)

    def mask(self, ids, lengths, rng: np.random.Generator, boundary=None) -> dict:
        """Masks each row of `ids` [batch, seq] (padded after `lengths`).

        Args:
            ids: int array [batch, seq] of `[CLS] a [SEP] b [SEP]` rows.
            lengths: int array [batch]: real pieces per row.
            rng: the generator every draw comes from.
            boundary: optional int/bool array [batch, seq], 1 where a word
                starts (the `token_boundary` feature); by default from
                `word_starts`.

        Returns:
            dict of NumPy arrays: `input_ids` [batch, seq] with the masks
            applied, `masked_lm_positions`, `masked_lm_ids` (the original
            ids) int32 and `masked_lm_weights` float32 [batch,
            max_predictions_per_seq] (sorted by position, zero padded), and
            `span_words` [ngram + 1]: how many chosen spans had n words.
        """
        ids = np.asarray(ids)
        lengths = np.asarray(lengths, np.int64)
        batch, seq = ids.shape
        limit = self.max_predictions_per_seq
        positions = np.zeros((batch, limit), np.int32)
        counts = np.zeros(batch, np.int64)
        span_words = np.zeros(self.ngram + 1, np.int64)
        if self.masked_lm_prob > 0 and batch:
            self._choose(ids, lengths, rng, boundary, positions, counts, span_words)
        weights = (np.arange(limit)[None, :] < counts[:, None]).astype(np.float32)
        rows = np.repeat(np.arange(batch), counts)
        cols = positions[weights > 0]
        labels = np.zeros((batch, limit), np.int32)
        labels[weights > 0] = ids[rows, cols]
        # 80% [MASK], 10% a random id, 10% unchanged (official order of draws
        # per piece: first < 0.8, then < 0.5 keeps).
        first, second = rng.random(len(cols)), rng.random(len(cols))
        random_ids = rng.integers(0, self.vocabulary_size, len(cols))
        original = ids[rows, cols]
        new = np.where(
            first < 0.8, self.mask_id, np.where(second < 0.5, original, random_ids)
        )
        output = np.array(ids, np.int32, copy=True)
        output[rows, cols] = new
        return {
            "input_ids": output,
            "masked_lm_positions": positions,
            "masked_lm_ids": labels,
            "masked_lm_weights": weights,
            "span_words": span_words,
        }

    def _choose(self, ids, lengths, rng, boundary, positions, counts, span_words):
        batch, seq = ids.shape
        valid = np.arange(seq)[None, :] < lengths[:, None]
        candidates = valid & (ids != self.cls_id) & (ids != self.sep_id)
        if not self.do_whole_word_mask:
            starts = candidates
        elif boundary is not None:
            starts = candidates & (np.asarray(boundary) > 0)
        else:
            if self.word_starts is None:
                raise ValueError(
                    "Whole-word masking needs `word_starts` or `boundary`."
                )
            starts = (
                candidates
                & self.word_starts[np.clip(ids, 0, len(self.word_starts) - 1)]
            )
        budgets = np.minimum(
            self.max_predictions_per_seq,
            np.maximum(1, np.rint(lengths * self.masked_lm_prob).astype(np.int64)),
        )
        # All draws for the block at once: a random order of the candidate
        # words of each row (argsort of uniform keys) and one n per word.
        keys = rng.random((batch, seq))
        ngram_draws = np.searchsorted(self._cdf, rng.random((batch, seq)), "right") + 1
        ngram_draws = np.minimum(ngram_draws, self.ngram)
        for row in range(batch):
            cand = np.flatnonzero(candidates[row])
            if not len(cand):
                continue
            is_start = starts[row, cand]
            # A piece that follows no word yet starts one (as in the official
            # grouping; its token_boundary stays 0).
            is_start[0] = True
            word_offsets = np.flatnonzero(is_start)
            num_words = len(word_offsets)
            order = np.argsort(keys[row, :num_words]).tolist()
            draws = ngram_draws[row, :num_words].tolist()
            offsets = word_offsets.tolist() + [len(cand)]
            budget = int(budgets[row])
            covered = bytearray(len(cand))
            chosen = []
            count = 0
            for k in range(num_words):
                if count >= budget:
                    break
                word = order[k]
                n = draws[k]
                start = offsets[word]
                end_word = min(word + n, num_words)
                end = offsets[end_word]
                # Shorter n-grams while this one would overrun the budget.
                while count + end - start > budget and n > 1:
                    n -= 1
                    end_word = min(word + n, num_words)
                    end = offsets[end_word]
                if count + end - start > budget or covered.find(1, start, end) >= 0:
                    continue
                covered[start:end] = b"\x01" * (end - start)
                chosen.append((start, end))
                count += end - start
                span_words[end_word - word] += 1
            if count:
                picked = np.sort(np.concatenate([cand[s:e] for s, e in chosen]))
                positions[row, :count] = picked
                counts[row] = count

    @staticmethod
    def histogram(span_words) -> dict:
        """`span_words` as {n: count} for n >= 1 (a JSON-friendly dict)."""
        return {n: int(c) for n, c in enumerate(span_words) if n >= 1}
