"""`ClassWeightedCrossentropy`: softmax cross-entropy with a weight per class
and label smoothing."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class ClassWeightedCrossentropy(keras.losses.Loss):
    """Sparse softmax cross-entropy on logits, each row weighted by its class,
    with optional label smoothing.

    Row `i` of gold class `y_i` costs `(1 - e) * w[y_i] * -log p[y_i]` plus
    `e / K * sum_k w[k] * -log p[k]` over the K classes (the gold class
    smoothed towards the uniform one): exactly torch's
    `cross_entropy(weight=w, label_smoothing=e, reduction="none")`. The
    batch's loss is their mean over the rows (Keras' `sum_over_batch_size`,
    as `fit(class_weight=...)` weighs), not over the weights (torch's
    `reduction="mean"` divides by their sum). With every weight 1 and no
    smoothing it is `SparseCategoricalCrossentropy(from_logits=True)`.

    Args:
        class_weights: one positive float per class, in class order, e.g.
            `ClassificationTask(class_weight="balanced")`'s
            `n / (classes * count)`; None: every class 1.
        label_smoothing: `e` in [0, 1): the share of each row's target
            spread evenly over the classes (transformers'
            `label_smoothing_factor`); 0: none.
        name: the loss's name.
        **kwargs: `reduction` (a tagger's "mean_with_sample_weight": the
            mean over the tagged tokens, torch's with `ignore_index`).

    Example:
    >>> loss = ClassWeightedCrossentropy([1.0, 3.0])
    >>> logits = [[0.0, 0.0], [0.0, 0.0]]
    >>> round(float(loss([0, 1], logits)), 4)  # (1 + 3) / 2 * ln 2
    1.3863
    >>> smoothed = ClassWeightedCrossentropy(label_smoothing=0.2)
    >>> round(float(smoothed([0], [[2.0, 0.0]])), 4)  # 0.8*0.127 + 0.2*(0.127+2.127)/2
    0.3269
    """

    def __init__(
        self,
        class_weights=None,
        label_smoothing=0.0,
        name="class_weighted_crossentropy",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        weights = None if class_weights is None else [float(w) for w in class_weights]
        if weights is not None and (
            len(weights) < 2 or not all(w > 0 for w in weights)
        ):
            raise ValueError(
                "`class_weights` must hold one positive weight per class (2 "
                f"or more), or be None. Received: {class_weights!r}"
            )
        if not 0 <= label_smoothing < 1:
            raise ValueError(
                "`label_smoothing` must be in [0, 1) (0: none). Received: "
                f"{label_smoothing!r}"
            )
        self.class_weights = weights
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        classes = ops.shape(y_pred)[-1]
        labels = ops.cast(ops.reshape(y_true, (-1,)), "int32")
        log_p = ops.log_softmax(ops.reshape(y_pred, (-1, classes)), axis=-1)
        weights = (
            ops.ones((classes,), log_p.dtype)
            if self.class_weights is None
            else ops.cast(ops.convert_to_tensor(self.class_weights), log_p.dtype)
        )
        gold = ops.take_along_axis(log_p, labels[:, None], axis=-1)[:, 0]
        cost = -ops.take(weights, labels) * gold
        if self.label_smoothing:
            spread = -ops.sum(log_p * weights, axis=-1) / ops.cast(classes, log_p.dtype)
            cost = (1 - self.label_smoothing) * cost + self.label_smoothing * spread
        # Per label, in the labels' shape: the sample weights of a tagger's
        # tokens ([batch, length]) weigh them one by one.
        return ops.reshape(cost, ops.shape(y_true))

    def get_config(self):
        return {
            **super().get_config(),
            "class_weights": self.class_weights,
            "label_smoothing": self.label_smoothing,
        }
