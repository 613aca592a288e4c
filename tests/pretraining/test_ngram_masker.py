"""NgramMasker: the official start-piece rules, 1/n spans, 80/10/10, whole words."""

from collections import Counter

import numpy as np
import pytest

from albert_keras.pretraining.ngram_masker import (
    NgramMasker,
    is_start_piece_sentencepiece,
    is_start_piece_wordpiece,
)

CLS, SEP, MASK = 2, 3, 4


def rows_of_words(num_rows, num_words, pieces_per_word=1, first_id=10):
    """Rows `[CLS] w w ... [SEP] w ... [SEP]`; word k has ids first_id + k*ppw + j."""
    length = num_words * pieces_per_word + 3
    ids = np.zeros((num_rows, length), np.int64)
    body = first_id + np.arange(num_words * pieces_per_word)
    half = len(body) // 2
    ids[:, 0] = CLS
    ids[:, 1 : half + 1] = body[:half]
    ids[:, half + 1] = SEP
    ids[:, half + 2 : -1] = body[half:]
    ids[:, -1] = SEP
    word_starts = np.zeros(first_id + len(body), bool)
    word_starts[first_id::pieces_per_word] = True
    word_starts[:5] = True  # <pad>, <unk>, [CLS], [SEP], [MASK] start with < or [
    return ids, np.full(num_rows, length), word_starts


def test_official_start_piece_rules():
    # `_is_start_piece_sp`: "▁", "<", a lone punctuation mark, or any character
    # outside a-z (the official punctuation string has no apostrophe).
    starts = ["\u2581the", "<unk>", ",", ".", "1", "\u00e9t\u00e9", "'s", "don't", "9,"]
    continuations = ["ing", "s", "ed", "[CLS]", "a-b", "Ing"]
    assert all(is_start_piece_sentencepiece(p) for p in starts)
    assert not any(is_start_piece_sentencepiece(p) for p in continuations)
    assert is_start_piece_wordpiece("un") and not is_start_piece_wordpiece("##able")
    table = NgramMasker.word_starts_of(["\u2581a", "b", "##c"], sentencepiece=False)
    assert table.tolist() == [True, True, False]


def test_ngram_lengths_follow_one_over_n():
    ids, lengths, starts = rows_of_words(60, 2000)
    masker = NgramMasker(
        len(starts), starts, masked_lm_prob=0.15, max_predictions_per_seq=300
    )
    out = masker.mask(ids, lengths, np.random.default_rng(0))
    spans = masker.histogram(out["span_words"])
    total = sum(spans.values())
    assert total > 10000
    expected = np.array([1, 1 / 2, 1 / 3]) / (1 + 1 / 2 + 1 / 3)
    got = np.array([spans[n] / total for n in (1, 2, 3)])
    # n is drawn with p ~ 1/n; longer spans overlap earlier ones (and get
    # shortened at the end of the budget) a little more often, so the spans
    # kept lean about 0.015 towards n = 1, as in the official algorithm.
    assert np.abs(got - expected).max() < 0.03, got
    # Budget: round(2003 * 0.15) = 300 pieces per row.
    assert (out["masked_lm_weights"].sum(axis=1) == 300).all()


def test_80_10_10_and_labels():
    ids, lengths, starts = rows_of_words(60, 1000)
    masker = NgramMasker(
        5000, np.ones(5000, bool), masked_lm_prob=0.15, max_predictions_per_seq=200
    )
    out = masker.mask(ids, lengths, np.random.default_rng(1))
    real = out["masked_lm_weights"] > 0
    rows = np.repeat(np.arange(len(ids)), real.sum(axis=1))
    positions = out["masked_lm_positions"][real]
    original = ids[rows, positions]
    new = out["input_ids"][rows, positions]
    assert np.array_equal(out["masked_lm_ids"][real], original)
    n = len(positions)
    assert n == 60 * 150
    assert abs(np.mean(new == MASK) - 0.8) < 0.015
    kept = np.mean(new == original)
    assert abs(kept - 0.1) < 0.012 + 0.002  # random ids may hit the original
    assert abs(np.mean((new != MASK) & (new != original)) - 0.1) < 0.012
    # Positions are sorted, inside the row, never [CLS]/[SEP]; the rest is untouched.
    for row in range(len(ids)):
        p = out["masked_lm_positions"][row][real[row]]
        assert (np.diff(p) > 0).all()
        assert not np.isin(ids[row, p], [CLS, SEP]).any()
        untouched = np.setdiff1d(np.arange(ids.shape[1]), p)
        assert np.array_equal(out["input_ids"][row, untouched], ids[row, untouched])


def test_whole_words_are_masked_together():
    ids, lengths, starts = rows_of_words(200, 40, pieces_per_word=3)
    masker = NgramMasker(len(starts), starts, max_predictions_per_seq=20)
    out = masker.mask(ids, lengths, np.random.default_rng(3))
    words_seen = Counter()
    for row in range(len(ids)):
        chosen = out["masked_lm_positions"][row][out["masked_lm_weights"][row] > 0]
        words = (ids[row, chosen] - 10) // 3
        words_seen.update(Counter(words.tolist()).values())
    assert set(words_seen) == {3}  # every masked word has all 3 pieces masked
    # Without whole-word masking, pieces are candidates on their own.
    masker = NgramMasker(
        len(starts), starts, max_predictions_per_seq=20, do_whole_word_mask=False
    )
    out = masker.mask(ids, lengths, np.random.default_rng(3))
    words_seen = Counter()
    for row in range(len(ids)):
        chosen = out["masked_lm_positions"][row][out["masked_lm_weights"][row] > 0]
        words_seen.update(Counter(((ids[row, chosen] - 10) // 3).tolist()).values())
    assert words_seen[1] > 0


def test_budget_and_token_boundary():
    # 128 pieces at 15% -> round(19.2) = 19 predictions; max 20 is not binding.
    ids, lengths, starts = rows_of_words(30, 125)
    masker = NgramMasker(len(starts), starts, max_predictions_per_seq=20)
    out = masker.mask(ids, lengths, np.random.default_rng(4))
    assert (out["masked_lm_weights"].sum(axis=1) == 19).all()
    capped = NgramMasker(len(starts), starts, max_predictions_per_seq=7)
    assert (
        capped.mask(ids, lengths, np.random.default_rng(4))["masked_lm_weights"].sum(
            axis=1
        )
        == 7
    ).all()
    ids, lengths, starts = rows_of_words(1, 4, pieces_per_word=2)
    boundary = NgramMasker(len(starts), starts).token_boundary(ids, lengths)
    # [CLS] w0a w0b w1a w1b [SEP] w2a w2b w3a w3b [SEP]
    assert boundary[0].tolist() == [1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1]


def test_same_generator_same_masks_and_prob_zero():
    ids, lengths, starts = rows_of_words(5, 100)
    masker = NgramMasker(len(starts), starts)
    a = masker.mask(ids, lengths, np.random.default_rng(7))
    b = masker.mask(ids, lengths, np.random.default_rng(7))
    c = masker.mask(ids, lengths, np.random.default_rng(8))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["masked_lm_positions"], c["masked_lm_positions"])
    none = NgramMasker(len(starts), starts, masked_lm_prob=0.0).mask(
        ids, lengths, np.random.default_rng(7)
    )
    assert none["masked_lm_weights"].sum() == 0
    assert np.array_equal(none["input_ids"], ids)


def test_bad_arguments():
    with pytest.raises(ValueError, match="masked_lm_prob"):
        NgramMasker(10, masked_lm_prob=1.5)
    with pytest.raises(ValueError, match="max_predictions_per_seq"):
        NgramMasker(10, max_predictions_per_seq=0)
    with pytest.raises(ValueError, match="one entry per id"):
        NgramMasker(10, np.ones(3, bool))
