"""`ClassWeightedCrossentropy`: softmax cross-entropy with a weight per class."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class ClassWeightedCrossentropy(keras.losses.Loss):
    """Sparse softmax cross-entropy on logits, each row weighted by its class.

    Row `i` of gold class `y_i` costs `class_weights[y_i] * CE_i`, and the
    batch's loss is their mean over the rows (Keras' `sum_over_batch_size`,
    as `fit(class_weight=...)` weighs), not over the weights (torch's
    `CrossEntropyLoss(weight=...)` divides by their sum). With every weight
    1 it is `SparseCategoricalCrossentropy(from_logits=True)`.

    Args:
        class_weights: one positive float per class, in class order, e.g.
            `ClassificationTask(class_weight="balanced")`'s
            `n / (classes * count)`.
        name: the loss's name.

    Example:
    >>> loss = ClassWeightedCrossentropy([1.0, 3.0])
    >>> logits = [[0.0, 0.0], [0.0, 0.0]]
    >>> round(float(loss([0, 1], logits)), 4)  # (1 + 3) / 2 * ln 2
    1.3863
    """

    def __init__(self, class_weights, name="class_weighted_crossentropy", **kwargs):
        super().__init__(name=name, **kwargs)
        weights = [float(w) for w in class_weights]
        if len(weights) < 2 or not all(w > 0 for w in weights):
            raise ValueError(
                "`class_weights` must hold one positive weight per class (2 "
                f"or more). Received: {class_weights!r}"
            )
        self.class_weights = weights

    def call(self, y_true, y_pred):
        labels = ops.cast(ops.reshape(y_true, (-1,)), "int32")
        logits = ops.reshape(y_pred, (-1, len(self.class_weights)))
        cost = keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )
        weights = ops.take(ops.convert_to_tensor(self.class_weights), labels)
        return ops.multiply(cost, ops.cast(weights, cost.dtype))

    def get_config(self):
        return {**super().get_config(), "class_weights": self.class_weights}
