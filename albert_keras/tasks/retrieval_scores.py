"""Retrieval metrics of a sentence-embedding dev set: each anchor ranks every
distinct candidate text of the set; and the baselines they must beat."""

from __future__ import annotations

import collections
import math
import re

import numpy as np

TOP_K = 10  # recall_at_10
_CHUNK = 1024  # anchors scored at once
_WORDS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|\w+")  # a Han character is a word


def candidate_texts(examples):
    """(texts, rows, relevant): the distinct positive and negative texts of
    `examples`, where each is first found, and each example's positive.

    Args:
        examples: dicts with `texts` (anchor, positive, negatives...).

    Returns:
        `texts`: the distinct candidate texts, in order of appearance;
        `rows`: (example, slot) of each in `examples`; `relevant`: int
        [examples], the index in `texts` of each example's positive.

    Example:
    >>> examples = [{"texts": ["q1", "a"]}, {"texts": ["q2", "a"]}]
    >>> candidate_texts(examples)
    (['a'], [(0, 1)], [0, 0])
    """
    index, rows, relevant = {}, [], []
    for i, example in enumerate(examples):
        for slot, text in enumerate(example["texts"][1:], start=1):
            if text not in index:
                index[text] = len(rows)
                rows.append((i, slot))
        relevant.append(index[example["texts"][1]])
    return list(index), rows, relevant


def retrieval_scores(scores, relevant) -> dict:
    """MRR, accuracy (top 1) and recall at 10 of a [anchors, candidates]
    similarity matrix, each anchor's one relevant candidate given.

    A candidate scoring the same as the relevant one does not rank above it.

    Example:
    >>> retrieval_scores(np.array([[0.9, 0.1], [0.8, 0.7]]), [0, 1])
    {'mrr': 0.75, 'accuracy': 0.5, 'recall_at_10': 1.0}
    """
    ranks = _ranks(np.asarray(scores, "float64"), np.asarray(relevant))
    return rank_scores(ranks)


def _ranks(scores, relevant):
    own = scores[np.arange(len(relevant)), relevant]
    return 1 + (scores > own[:, None]).sum(axis=1)


def rank_scores(ranks) -> dict:
    """MRR, accuracy and recall at 10 of the relevant candidates' ranks (1: first).

    >>> rank_scores([1, 4])
    {'mrr': 0.625, 'accuracy': 0.5, 'recall_at_10': 1.0}
    """
    ranks = np.asarray(ranks)
    if not ranks.size:
        return {"mrr": 0.0, "accuracy": 0.0, "recall_at_10": 0.0}
    return {
        "mrr": float(np.mean(1.0 / ranks)),
        "accuracy": float(np.mean(ranks == 1)),
        "recall_at_10": float(np.mean(ranks <= TOP_K)),
    }


def vector_ranks(anchors, candidates, relevant):
    """Each anchor's relevant rank and best candidate by dot product,
    computed a chunk of anchors at a time (a large dev set's whole matrix
    need not fit in memory).

    Returns:
        (ranks, best, own, top): int ranks (1 = first), the index and the
        similarity of each anchor's best candidate (`top`), and the
        similarity of its relevant one (`own`).
    """
    anchors, candidates = (np.asarray(v, "float64") for v in (anchors, candidates))
    relevant = np.asarray(relevant)
    parts = []
    for start in range(0, len(anchors), _CHUNK):
        rows = slice(start, start + _CHUNK)
        scores = anchors[rows] @ candidates.T
        mine = relevant[rows]
        parts.append(
            (
                _ranks(scores, mine),
                scores.argmax(axis=1),
                scores[np.arange(len(mine)), mine],
                scores.max(axis=1),
            )
        )
    if not parts:
        return tuple(np.zeros(0) for _ in range(4))
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))


def random_baseline(num_candidates) -> dict:
    """The expected scores of ranking the candidates at random."""
    m = max(int(num_candidates), 1)
    return {
        "mrr": sum(1 / r for r in range(1, m + 1)) / m,
        "accuracy": 1 / m,
        "recall_at_10": min(TOP_K, m) / m,
    }


def tfidf_baseline(anchors, candidates, relevant) -> dict:
    """The scores of ranking by TF-IDF cosine over words (a Han character is
    a word): the lexical match a trained encoder must beat.

    Example:
    >>> tfidf_baseline(["red apple", "blue sky"], ["the sky is blue",
    ...                "an apple, red"], [1, 0])["accuracy"]
    1.0
    """
    words = [_WORDS.findall(t.lower()) for t in candidates]
    df = collections.Counter(w for ws in words for w in set(ws))
    idf = {w: math.log((1 + len(words)) / (1 + n)) + 1 for w, n in df.items()}
    postings = collections.defaultdict(lambda: ([], []))
    for c, ws in enumerate(words):
        for w, weight in _unit_weights(ws, idf).items():
            postings[w][0].append(c)
            postings[w][1].append(weight)
    postings = {w: (np.asarray(c), np.asarray(x)) for w, (c, x) in postings.items()}
    ranks = []
    for text, own in zip(anchors, relevant, strict=True):
        scores = np.zeros(len(candidates))
        for w, weight in _unit_weights(_WORDS.findall(text.lower()), idf).items():
            where, values = postings[w]
            scores[where] += weight * values
        scores = np.round(scores, 12)  # equal sums in any order tie
        ranks.append(1 + int((scores > scores[own]).sum()))
    return rank_scores(ranks)


def _unit_weights(words, idf):
    """{word: tf * idf} scaled to unit L2 norm; words without an idf (never
    in a candidate) left out."""
    counts = collections.Counter(w for w in words if w in idf)
    weights = {w: n * idf[w] for w, n in counts.items()}
    norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
    return {w: v / norm for w, v in weights.items()}
