"""A classifier's loss: plain, class-weighted (`--class-weight`) or with
label smoothing (`--label-smoothing`)."""

from __future__ import annotations

import keras


def classification_loss(config):
    """The training loss of a `ClassificationConfig` or `MultipleChoiceConfig`.

    `SparseCategoricalCrossentropy` on logits when every class counts the
    same and no label is smoothed (what runs before these options trained
    with), else `ClassWeightedCrossentropy` with the config's weights and
    smoothing (torch's `cross_entropy(weight=, label_smoothing=)`).

    Example:
    >>> from albert_keras.tasks.classification_task import ClassificationConfig
    >>> classification_loss(ClassificationConfig(num_classes=2)).name
    'sparse_categorical_crossentropy'
    >>> smoothed = ClassificationConfig(num_classes=2, label_smoothing=0.1)
    >>> classification_loss(smoothed).label_smoothing
    0.1
    """
    weights = getattr(config, "class_weight", None)  # multiple choice has none
    weights = weights if isinstance(weights, list) else None
    if weights is None and not config.label_smoothing:
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    from albert_keras.training.class_weighted_crossentropy import (
        ClassWeightedCrossentropy,
    )

    return ClassWeightedCrossentropy(weights, label_smoothing=config.label_smoothing)


def check_label_smoothing(value, num_classes) -> None:
    """Refuses a `label_smoothing` outside [0, 1), or one for a regression.

    Example:
    >>> check_label_smoothing(0.1, 3) is None
    True
    """
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and 0 <= value < 1):
        raise ValueError(
            "`label_smoothing` (--label-smoothing) is the share of each row's "
            "target spread over the classes: give a number from 0 (none) up "
            f"to but not including 1, e.g. 0.1. Received: {value!r}"
        )
    if value and num_classes == 1:
        raise ValueError(
            "`label_smoothing` (--label-smoothing) smooths the classes of a "
            "classifier; a regression (num_classes=1, --task regress) has "
            "none. Leave it out."
        )
