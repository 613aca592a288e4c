"""`DevEvaluation`: the task's own dev metrics after every epoch, in the Keras logs."""

from __future__ import annotations

import keras
import numpy as np

from albert_keras.tasks import metrics as task_metrics
from albert_keras.training.nan_guard import nan_detected
from albert_keras.training.score_text import score_text


def classification_scores(labels, logits, num_classes) -> dict:
    """accuracy, F1 (binary, or macro for 3+ classes) and Matthews correlation."""
    predictions = np.argmax(logits, axis=-1)
    f1 = (
        task_metrics.f1_binary(labels, predictions)
        if num_classes == 2
        else task_metrics.f1_macro(labels, predictions)
    )
    return {
        "accuracy": task_metrics.accuracy(labels, predictions),
        "f1": f1,
        "mcc": task_metrics.matthews_correlation(labels, predictions),
    }


def regression_scores(labels, predictions) -> dict:
    """Pearson and Spearman correlation (STS-B's metrics) and the mean squared error.

    A constant prediction has no correlation: 0 (SciPy would give NaN).
    """
    predictions = np.reshape(predictions, -1).astype("float64")
    labels = np.reshape(labels, -1).astype("float64")
    return {
        "pearson": task_metrics.pearson(labels, predictions),
        "spearman": task_metrics.spearman(labels, predictions),
        "mse": float(np.mean((labels - predictions) ** 2)),
    }


class DevEvaluation(keras.callbacks.Callback):
    """Runs `score(model)` at each epoch end and adds `val_<name>` to the logs.

    Placed before `EarlyStopping` and `ModelCheckpoint` in the callback list,
    it lets them watch the task metric (dev accuracy, Pearson, SQuAD F1)
    rather than the loss. The scores of every epoch are kept in `history`.

    Args:
        score: callable(model) -> dict of floats (higher is better for the
            monitored one).
        verbose: print the scores after each epoch.
        unit: what an epoch is called in that line ("evaluation" under
            `--eval-every`).

    Example:
    >>> callback = DevEvaluation(lambda model: {"accuracy": 1.0}, verbose=False)
    """

    def __init__(self, score, verbose=True, unit="epoch"):
        super().__init__()
        self.score = score
        self.verbose = verbose
        self.unit = unit
        self.history: list[dict] = []

    def on_epoch_end(self, epoch, logs=None):
        if nan_detected(self.model):
            return  # `NanGuard` stopped: the weights are not worth scoring
        scores = self.score(self.model)
        self.history.append(scores)
        if logs is not None:
            # Numbers only: a list (one threshold per label) stays in history.
            logs.update({f"val_{k}": v for k, v in scores.items() if np.ndim(v) == 0})
        if self.verbose:
            print(f"{self.unit} {epoch + 1} dev: {score_text(scores)}", flush=True)
