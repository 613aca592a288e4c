"""`score_text`: a run's figures as one readable line."""

from __future__ import annotations


def score_text(scores, keys=None) -> str:
    """ "accuracy 0.8125, f1 0.8000": the numbers of `scores`, 4 decimals.

    Huge magnitudes (SQuAD's answer-nothing threshold, the lowest float32)
    are written short; values that are not numbers are left out.

    Args:
        scores: a dict of name -> number (Keras logs, dev scores, metrics).
        keys: only these names, if given.

    Example:
    >>> score_text({"f1": 0.5, "best_f1_thresh": -3.4028234663852886e38})
    'f1 0.5000, best_f1_thresh -3.403e+38'
    """
    parts = []
    for key, value in (scores or {}).items():
        if keys is not None and key not in keys:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        shown = f"{number:.4f}" if abs(number) < 1e6 else f"{number:.4g}"
        parts.append(f"{key} {shown}")
    return ", ".join(parts)
