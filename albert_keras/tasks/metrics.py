"""Task metrics as the benchmarks define them: accuracy, F1, MCC, Pearson, Spearman."""

from __future__ import annotations

import numpy as np


def accuracy(labels, predictions) -> float:
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(np.mean(labels == predictions))


def f1_binary(labels, predictions, positive=1) -> float:
    """F1 of the positive class (GLUE's MRPC/QQP F1)."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    tp = np.sum((predictions == positive) & (labels == positive))
    fp = np.sum((predictions == positive) & (labels != positive))
    fn = np.sum((predictions != positive) & (labels == positive))
    return float(2 * tp / (2 * tp + fp + fn)) if tp else 0.0


def f1_macro(labels, predictions) -> float:
    """Unweighted mean of the per-class F1 over the classes present."""
    classes = np.union1d(np.unique(labels), np.unique(predictions))
    return float(np.mean([f1_binary(labels, predictions, c) for c in classes]))


def matthews_correlation(labels, predictions) -> float:
    """Matthews correlation (CoLA), the multi-class form; 0 when undefined."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    classes = np.union1d(np.unique(labels), np.unique(predictions))
    index = {c: i for i, c in enumerate(classes)}
    confusion = np.zeros((len(classes), len(classes)), "float64")
    for t, p in zip(labels, predictions, strict=True):
        confusion[index[t], index[p]] += 1
    t_sum, p_sum = confusion.sum(1), confusion.sum(0)
    n, correct = confusion.sum(), np.trace(confusion)
    cov_ytyp = correct * n - t_sum @ p_sum
    cov_ypyp = n * n - p_sum @ p_sum
    cov_ytyt = n * n - t_sum @ t_sum
    denominator = np.sqrt(cov_ytyt * cov_ypyp)
    return float(cov_ytyp / denominator) if denominator else 0.0


def pearson(x, y) -> float:
    x, y = np.asarray(x, "float64"), np.asarray(y, "float64")
    if x.size == 0 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0  # a constant: its mean's rounding would give -0.0000 or 1e-17
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denominator) if denominator else 0.0


def _ranks(x):
    """Average ranks, ties sharing the mean of their positions (as SciPy)."""
    x = np.asarray(x, "float64")
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), "float64")
    sorted_x = x[order]
    start = 0
    while start < len(x):
        end = start
        while end + 1 < len(x) and sorted_x[end + 1] == sorted_x[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def spearman(x, y) -> float:
    return pearson(_ranks(x), _ranks(y))


def multi_label_scores(gold, predicted) -> dict:
    """Multi-label scores of 0/1 arrays [examples, labels].

    `micro_f1`: F1 of every (example, label) decision pooled; `macro_f1`:
    the mean of each label's F1 over the labels that are true or predicted
    somewhere; `exact_match`: the share of examples whose whole label set is
    right (scikit-learn's subset accuracy); `label_accuracy`: the share of
    right decisions (1 - Hamming loss).

    Example:
    >>> scores = multi_label_scores([[1, 0], [1, 1]], [[1, 0], [0, 1]])
    >>> scores["micro_f1"], scores["exact_match"], scores["label_accuracy"]
    (0.8, 0.5, 0.75)
    """
    gold = np.asarray(gold, bool).reshape(len(gold), -1)
    predicted = np.asarray(predicted, bool).reshape(gold.shape)
    tp = (gold & predicted).sum(axis=0)
    wrong = (gold ^ predicted).sum(axis=0)  # false positives + false negatives
    present = (gold | predicted).any(axis=0)
    per_label = np.where(present, 2 * tp / np.maximum(2 * tp + wrong, 1), 0.0)
    pooled = 2 * tp.sum() + wrong.sum()
    return {
        "micro_f1": float(2 * tp.sum() / pooled) if tp.sum() else 0.0,
        "macro_f1": float(per_label[present].mean()) if present.any() else 0.0,
        "exact_match": float(np.mean((gold == predicted).all(axis=1)))
        if len(gold)
        else 0.0,
        "label_accuracy": float(np.mean(gold == predicted)) if gold.size else 0.0,
    }


def best_threshold(gold, probabilities, thresholds):
    """(scores, threshold): the threshold of `thresholds` whose decisions
    have the best micro F1 against `gold` (ties: the one nearest 0.5).

    Example:
    >>> best_threshold([[1, 0]], [[0.4, 0.2]], (0.3, 0.5))[1]
    0.3
    """
    probabilities = np.asarray(probabilities)
    tried = [(multi_label_scores(gold, probabilities > t), t) for t in thresholds]
    return max(tried, key=lambda x: (x[0]["micro_f1"], -abs(x[1] - 0.5)))


def best_label_thresholds(gold, probabilities, thresholds):
    """(scores, thresholds): each label's own threshold of `thresholds`, the
    one with that label's best F1 on `gold`; ties, and labels never true
    there, take the one nearest the shared `best_threshold`.

    Example:
    >>> scores, chosen = best_label_thresholds(
    ...     [[1, 0], [0, 1]], [[0.6, 0.3], [0.2, 0.25]], (0.1, 0.5))
    >>> chosen, scores["micro_f1"]
    ([0.5, 0.1], 0.8)
    """
    gold = np.asarray(gold, bool)
    probabilities = np.asarray(probabilities).reshape(gold.shape)
    _, shared = best_threshold(gold, probabilities, thresholds)

    def label_f1(j, t):
        decided = probabilities[:, j] > t
        tp = int((decided & gold[:, j]).sum())
        return 2 * tp / (2 * tp + int((decided ^ gold[:, j]).sum())) if tp else 0.0

    chosen = [
        float(max(thresholds, key=lambda t, j=j: (label_f1(j, t), -abs(t - shared))))
        for j in range(gold.shape[1])
    ]
    return multi_label_scores(gold, probabilities > np.asarray(chosen)), chosen
