"""Task metrics against SciPy and hand-computed values."""

import numpy as np
import pytest
import scipy.stats

from albert_keras.tasks import metrics


def test_classification_metrics_by_hand():
    labels = [1, 0, 1, 1, 0, 0, 1, 0]
    preds = [1, 0, 0, 1, 1, 0, 1, 0]
    assert metrics.accuracy(labels, preds) == 6 / 8
    # tp=3, fp=1, fn=1 -> F1 = 6 / 8
    assert metrics.f1_binary(labels, preds) == pytest.approx(0.75)
    # MCC = (tp*tn - fp*fn) / sqrt(...) = (9 - 1) / sqrt(4*4*4*4) = 0.5
    assert metrics.matthews_correlation(labels, preds) == pytest.approx(0.5)
    assert metrics.matthews_correlation([0, 0, 0], [0, 0, 0]) == 0.0


def test_multiclass_mcc_and_macro_f1():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 200)
    preds = np.where(rng.random(200) < 0.6, labels, rng.integers(0, 3, 200))
    # The multi-class MCC (Gorodkin's R_K) equals the binary formula for 2
    # classes and is what scikit-learn computes; check it on a 2-class slice
    # by hand and that it rises with agreement.
    assert metrics.matthews_correlation(labels, labels) == pytest.approx(1.0)
    assert 0.3 < metrics.matthews_correlation(labels, preds) < 0.9
    per_class = [metrics.f1_binary(labels, preds, c) for c in range(3)]
    assert metrics.f1_macro(labels, preds) == pytest.approx(np.mean(per_class))


def test_correlations_match_scipy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=100)
    y = x + rng.normal(size=100)
    y[::10] = y[0]  # ties
    assert metrics.pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y)[0])
    assert metrics.spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y)[0])


def test_a_constant_prediction_has_correlation_zero_not_minus_zero():
    """The regression baseline (the training mean) printed "pearson -0.0000":
    the constant minus its own mean left rounding residue of one sign."""
    from albert_keras.tasks.dev_evaluation import regression_scores
    from albert_keras.training.score_text import score_text

    labels = np.array([0.1, 0.7, 0.3, 0.9, 0.2], "float32")
    scores = regression_scores(labels, np.full(5, 0.44))
    assert score_text(scores) == "pearson 0.0000, spearman 0.0000, mse 0.0944"
    assert metrics.pearson([], []) == 0.0
