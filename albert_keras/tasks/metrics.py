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
