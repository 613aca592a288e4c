"""`InBatchNegativesLoss`: contrastive loss of a bi-encoder, the other
examples of the batch as negatives."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class InBatchNegativesLoss(keras.losses.Loss):
    """Softmax cross-entropy of each anchor over the batch's candidates.

    `y_pred` holds unit-length embeddings [batch, texts, dim]: text 0 of
    each example is its anchor (a query), text 1 its positive, texts 2...
    optional hard negatives. Anchor `i` is scored against every positive
    and negative of the batch, `scale * cosine`, and its target is its own
    positive: sentence-transformers' `MultipleNegativesRankingLoss`.

    `y_true` [batch] names each example's positive by an id: candidates
    with the same id as anchor `i`'s (the same positive text given to
    several anchors) are left out of its softmax rather than counted as
    negatives. With `symmetric`, each positive is also scored against the
    batch's anchors and the two cross-entropies averaged
    (`MultipleNegativesSymmetricRankingLoss`, CLIP's loss).

    Args:
        scale: the inverse temperature multiplying the cosines (20: the
            sentence-transformers default).
        symmetric: also the positives -> anchors direction.
        name: the loss's name.
        **kwargs: `reduction`, as `keras.losses.Loss`.

    Example:
    >>> import numpy as np
    >>> y = np.eye(2, dtype="float32")[[[0, 0], [1, 1]]]  # two exact matches
    >>> round(float(InBatchNegativesLoss(scale=1.0)([0, 1], y)), 4)  # ln(1 + e^-1)
    0.3133
    """

    def __init__(
        self, scale=20.0, symmetric=False, name="in_batch_negatives", **kwargs
    ):
        super().__init__(name=name, **kwargs)
        check_scale(scale)
        self.scale = float(scale)
        self.symmetric = bool(symmetric)

    def call(self, y_true, y_pred):
        y_pred = ops.cast(y_pred, "float32")
        ids = ops.cast(ops.reshape(y_true, (-1,)), "int32")
        anchors, positives = y_pred[:, 0], y_pred[:, 1]
        batch = ops.shape(anchors)[0]
        # Candidates: the batch's positives, then each hard negative text.
        others = ops.reshape(
            ops.transpose(y_pred[:, 2:], (1, 0, 2)), (-1, ops.shape(y_pred)[-1])
        )
        candidates = ops.concatenate([positives, others], axis=0)
        same = ops.equal(ids[:, None], ids[None, :])
        duplicate = ops.logical_and(same, ops.logical_not(ops.eye(batch) > 0))
        extra = ops.shape(candidates)[0] - batch
        mask = ops.concatenate([duplicate, ops.zeros((batch, extra), "bool")], axis=1)
        cost = _cross_entropy(self.scale * anchors @ ops.transpose(candidates), mask)
        if self.symmetric:
            back = self.scale * positives @ ops.transpose(anchors)
            cost = (cost + _cross_entropy(back, duplicate)) / 2
        return cost

    def get_config(self):
        return {
            **super().get_config(),
            "scale": self.scale,
            "symmetric": self.symmetric,
        }


def check_scale(scale) -> None:
    """ValueError where `scale` is not a positive number."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
        raise ValueError(
            "`scale` must be a positive number (the inverse temperature of "
            f"the cosines; 20 is usual). Received: scale={scale!r}"
        )


def _cross_entropy(logits, left_out):
    """Row i's cross-entropy with target column i, `left_out` columns masked."""
    logits = ops.where(left_out, -1e9, logits)
    log_p = ops.log_softmax(logits, axis=-1)
    return -ops.diagonal(log_p[:, : ops.shape(logits)[0]])
