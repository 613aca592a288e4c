"""Entity (chunk) precision, recall and F1 by the CoNLL `conlleval` rules.

A chunk is a run of tags `B-X I-X ...` (IOB2), also as IOB1 writes it (an
`I-X` after `O` opens a chunk) and IOBES (`E-X` closes one, `S-X` is one on
its own). Where a chunk starts and ends follows conlleval.pl's
`startOfChunk` / `endOfChunk`; a predicted chunk is correct when its start,
end and type are the gold chunk's. Sentences are scored apart (no chunk
crosses their boundary).
"""

from __future__ import annotations

import collections
import re

OUTSIDE = "O"
_CHUNK_TAG = re.compile(r"^[BIES]-.+$")


def is_chunk_scheme(labels) -> bool:
    """Whether a tag set is chunk tags (IOB / IOBES with `O`), so entity
    scores mean something; POS tags, say, are not.

    Example:
    >>> is_chunk_scheme(["O", "B-PER", "I-PER"]), is_chunk_scheme(["NOUN", "VERB"])
    (True, False)
    """
    labels = [str(label) for label in labels]
    chunked = [label for label in labels if label != OUTSIDE]
    return bool(chunked) and all(_CHUNK_TAG.match(label) for label in chunked)


def _split(label):
    """("B", "PER") of "B-PER"; ("O", "") of "O"."""
    prefix, _, kind = str(label).partition("-")
    return prefix, kind


def _ends(prev_tag, tag, prev_type, type_):
    """conlleval's endOfChunk: a chunk ended between the two words."""
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", OUTSIDE):
        return True
    return prev_tag != OUTSIDE and prev_type != type_


def _starts(prev_tag, tag, prev_type, type_):
    """conlleval's startOfChunk: a chunk started at this word."""
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", OUTSIDE) and tag in ("E", "I"):
        return True
    return tag != OUTSIDE and prev_type != type_


def chunks(tags) -> list[tuple[str, int, int]]:
    """The chunks of one sentence's tags, as (type, first word, end word).

    Example:
    >>> chunks(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"])
    [('PER', 0, 2), ('LOC', 3, 4), ('LOC', 4, 5)]
    """
    found, start, kind = [], None, ""
    prev_tag, prev_type = OUTSIDE, ""
    for i, label in enumerate([*tags, OUTSIDE]):
        tag, type_ = _split(label)
        if start is not None and _ends(prev_tag, tag, prev_type, type_):
            found.append((kind, start, i))
            start = None
        if tag != OUTSIDE and _starts(prev_tag, tag, prev_type, type_):
            start, kind = i, type_
        prev_tag, prev_type = tag, type_
    return found


def entity_counts(gold, predicted) -> dict:
    """{type: [gold chunks, predicted chunks, correct chunks]} over sentences.

    Args:
        gold, predicted: lists of sentences, each a list of tag strings (the
            same number of words in both).
    """
    counts = collections.defaultdict(lambda: [0, 0, 0])
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        gold_chunks, predicted_chunks = (
            set(chunks(gold_tags)),
            set(chunks(predicted_tags)),
        )
        for kind, *_ in gold_chunks:
            counts[kind][0] += 1
        for kind, *_ in predicted_chunks:
            counts[kind][1] += 1
        for kind, *_ in gold_chunks & predicted_chunks:
            counts[kind][2] += 1
    return dict(counts)


def precision_recall_f1(gold, predicted, correct) -> tuple[float, float, float]:
    """conlleval.pl's figures (as fractions): 0 where a count is 0."""
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def entity_scores(gold, predicted) -> dict:
    """`entity_precision`, `entity_recall`, `entity_f1` over all chunk types.

    Example:
    >>> scores = entity_scores([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]])
    >>> scores["entity_f1"], scores["entity_recall"]
    (0.0, 0.0)
    """
    counts = entity_counts(gold, predicted)
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    precision, recall, f1 = precision_recall_f1(*totals)
    return {"entity_precision": precision, "entity_recall": recall, "entity_f1": f1}


def scores_by_type(gold, predicted) -> dict:
    """{type: {"precision", "recall", "f1", "support"}}: conlleval's per-type lines."""
    result = {}
    for kind, (g, p, c) in sorted(entity_counts(gold, predicted).items()):
        precision, recall, f1 = precision_recall_f1(g, p, c)
        result[kind] = {"precision": precision, "recall": recall, "f1": f1}
        result[kind]["support"] = g
    return result


def tag_scores(gold, predicted, names) -> dict:
    """`accuracy` over words, and the entity scores where `names` are chunk tags.

    Example:
    >>> tag_scores([["B-X", "O"]], [["B-X", "B-X"]], ["O", "B-X"])["accuracy"]
    0.5
    """
    pairs = [
        (g, p)
        for gs, ps in zip(gold, predicted, strict=True)
        for g, p in zip(gs, ps, strict=True)
    ]
    accuracy = sum(g == p for g, p in pairs) / len(pairs) if pairs else 0.0
    scores = {"accuracy": accuracy}
    if is_chunk_scheme(names):
        outside = [[p if p is not None else OUTSIDE for p in ps] for ps in predicted]
        scores.update(entity_scores(gold, outside))
    return scores
