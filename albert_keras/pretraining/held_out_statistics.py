"""Held-out statistics: SOP pairs, masked predictions, the unigram baseline."""

from __future__ import annotations

import numpy as np


def unigram_accuracy(dataset, steps: int | None = None) -> float:
    """MLM accuracy of always predicting the most frequent masked token (a baseline)."""
    return held_out_sizes(dataset, steps)["mlm_unigram_baseline"]


def held_out_sizes(dataset, steps: int | None = None) -> dict:
    """What held-out accuracies are computed on, and the unigram baseline.

    Args:
        dataset: batches of official features, e.g. a held-out set, or of
            `(x, y)` (a `PretrainingBatches`).
        steps: the batches evaluated (None: all).

    Returns: {"sop_pairs": instances (one SOP prediction each),
        "mlm_predictions": masked positions (the weights' sum),
        "mlm_unigram_baseline": MLM accuracy of always predicting the most
        frequent masked token}.
    """
    counts: dict[int, float] = {}
    total, pairs = 0.0, 0
    # Each process of a JAX job sees its rows: count the whole batches.
    batches = getattr(dataset, "global_batches", lambda: dataset)()
    for i, features in enumerate(batches):
        if steps is not None and i >= steps:
            break
        if isinstance(features, tuple):  # (x, y)
            features = {
                "masked_lm_ids": features[1]["mask_ids"],
                "masked_lm_weights": features[1]["mask_weights"],
            }
        ids = np.asarray(features["masked_lm_ids"])
        weights = np.asarray(features["masked_lm_weights"])
        pairs += len(ids)
        for token, weight in zip(ids.ravel(), weights.ravel(), strict=True):
            counts[int(token)] = counts.get(int(token), 0.0) + float(weight)
        total += float(weights.sum())
    return {
        "sop_pairs": pairs,
        "mlm_predictions": int(round(total)),
        "mlm_unigram_baseline": max(counts.values()) / total if total else 0.0,
    }
