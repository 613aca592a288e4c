"""SegmentPairer: SOP order and labels, NSP pairs, lone segments, truncation."""

from collections import Counter

import numpy as np
import pytest

from albert_keras.pretraining.segment_pairer import SegmentPairer


def synthetic(num_docs=200, segments=10, tokens=7, vary=False, seed=0):
    """Token ids encode (document, segment, token) as d * 10**6 + s * 1000 + t."""
    rng = np.random.default_rng(seed)
    ids, lengths, starts = [], [], [0]
    for d in range(num_docs):
        for s in range(segments):
            n = int(rng.integers(1, 2 * tokens)) if vary else tokens
            ids.extend(d * 10**6 + s * 1000 + np.arange(n))
            lengths.append(n)
        starts.append(starts[-1] + segments)
    return np.array(ids, np.int64), np.array(lengths), np.array(starts)


def unpack(ids, spans):
    for a0, a1, b0, b1 in spans:
        yield ids[a0:a1], ids[b0:b1]


def test_sop_pairs_are_consecutive_text_of_one_document():
    ids, lengths, starts = synthetic(vary=True)
    pairer = SegmentPairer(max_seq_length=40, short_seq_prob=0.1)
    spans, labels, skipped = pairer.pairs(
        ids, lengths, starts, np.random.default_rng(0)
    )
    assert len(spans) > 300 and skipped == 0
    for (a, b), label in zip(unpack(ids, spans), labels, strict=True):
        assert len(a) >= 1 and len(b) >= 1 and len(a) + len(b) <= 37
        assert a[0] // 10**6 == a[-1] // 10**6 == b[0] // 10**6 == b[-1] // 10**6
        # Each side is one run of the document; label 0: A then B, 1: swapped.
        first, second = (a, b) if label == 0 else (b, a)
        assert first[-1] < second[0]
    assert 0.45 < labels.mean() < 0.55


def test_random_next_sentence_pairs_other_documents():
    ids, lengths, starts = synthetic()
    pairer = SegmentPairer(max_seq_length=40, random_next_sentence=True)
    spans, labels, _ = pairer.pairs(ids, lengths, starts, np.random.default_rng(1))
    for (a, b), label in zip(unpack(ids, spans), labels, strict=True):
        same_document = a[0] // 10**6 == b[0] // 10**6
        assert same_document == (label == 0)
        if label == 0:
            assert a[-1] < b[0]  # NSP keeps the order of the real next segment
    assert 0.4 < labels.mean() < 0.6


def test_lone_long_segment_is_cut_in_two_at_a_word_start():
    ids, lengths, starts = synthetic(num_docs=100, segments=2, tokens=60)
    word_starts = np.zeros(int(ids.max()) + 1, bool)
    word_starts[ids[ids % 4 == 0]] = True  # a word every 4 pieces
    pairer = SegmentPairer(
        max_seq_length=40, short_seq_prob=0.0, word_starts=word_starts
    )
    spans, labels, skipped = pairer.pairs(
        ids, lengths, starts, np.random.default_rng(2)
    )
    assert skipped == 0
    for (a, b), label in zip(unpack(ids, spans), labels, strict=True):
        assert a[0] // 1000 == b[0] // 1000  # the same segment
        first, second = (a, b) if label == 0 else (b, a)
        assert first[-1] < second[0]
        assert second[0] % 4 == 0 or second[0] % 1000 > first[-1] % 1000 + 1
    # A one-piece document cannot be paired: skipped and counted.
    spans, _, skipped = SegmentPairer(max_seq_length=40).pairs(
        np.array([7]), np.array([1]), np.array([0, 1]), np.random.default_rng(0)
    )
    assert len(spans) == 0 and skipped == 1


def official_truncation(a_len, b_len, max_tokens, rng):
    """The official `truncate_seq_pair` loop, counting what each side loses."""
    a, b = list(range(a_len)), list(range(b_len))
    while len(a) + len(b) > max_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()
    return a_len - len(a), b_len - len(b), (a[0] if a else 0), (b[0] if b else 0)


def test_truncation_matches_the_official_loop():
    rng = np.random.default_rng(3)
    cases = [(3, 50, 37), (50, 3, 37), (30, 30, 37), (25, 24, 37), (100, 90, 37)]
    cases += [(int(x), int(y), 37) for x, y in rng.integers(1, 120, (40, 2))]
    for a_len, b_len, max_tokens in cases:
        spans = np.array([[0, a_len, 1000, 1000 + b_len]] * 4000)
        out = SegmentPairer._truncate(spans, max_tokens, rng)
        cut_a = a_len - (out[:, 1] - out[:, 0])
        cut_b = b_len - (out[:, 3] - out[:, 2])
        ref = [official_truncation(a_len, b_len, max_tokens, rng) for _ in range(300)]
        # How much each side loses is deterministic and the same.
        assert set(cut_a) == {ref[0][0]} and set(cut_b) == {ref[0][1]}
        # The front share is Binomial(k, 1/2), as the official coin flips.
        if ref[0][0]:
            ours = out[:, 0].mean()
            theirs = np.mean([r[2] for r in ref])
            assert abs(ours - theirs) < 0.25 * np.sqrt(ref[0][0]) + 0.2


def test_short_targets_and_seeding():
    ids, lengths, starts = synthetic(num_docs=300, segments=20, tokens=5)
    long_only = SegmentPairer(max_seq_length=64, short_seq_prob=0.0)
    short = SegmentPairer(max_seq_length=64, short_seq_prob=0.5)
    lengths_of = {}
    for name, pairer in (("long", long_only), ("short", short)):
        spans, _, _ = pairer.pairs(ids, lengths, starts, np.random.default_rng(4))
        lengths_of[name] = (spans[:, 1] - spans[:, 0]) + (spans[:, 3] - spans[:, 2])
    # 100-piece documents: a full 61-piece pair, then the 35-piece rest.
    assert set(lengths_of["long"].tolist()) == {61, 35}
    assert np.mean(lengths_of["short"] < 30) > 0.2
    a = long_only.pairs(ids, lengths, starts, np.random.default_rng(5))
    b = long_only.pairs(ids, lengths, starts, np.random.default_rng(5))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    counts = Counter(a[1].tolist())
    assert counts[0] and counts[1]


def test_bad_arguments():
    with pytest.raises(ValueError, match="max_seq_length=4"):
        SegmentPairer(max_seq_length=4)
    with pytest.raises(ValueError, match="short_seq_prob"):
        SegmentPairer(short_seq_prob=-0.1)
