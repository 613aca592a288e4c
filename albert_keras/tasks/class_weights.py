"""A classifier's class weights (`--class-weight`): checked, or balanced.

`ClassificationConfig(class_weight=...)` takes "balanced" or one weight per
class; `balanced_class_weights` turns "balanced" into numbers once the
training labels are read (scikit-learn's `compute_class_weight("balanced")`:
`n / (classes * count)`, so a class twice as rare weighs twice as much and
the weights average 1 over the training rows).
"""

from __future__ import annotations

import math

BALANCED = "balanced"


def check_class_weight(value, num_classes):
    """Refuses a `class_weight` that is neither "balanced" nor one positive
    number per class (`num_classes` None: not known yet, not counted).

    Example:
    >>> check_class_weight([1, 2.5], 2) is None
    True
    """
    if value is None or value == BALANCED:
        if value is not None and num_classes == 1:
            raise ValueError(_NOT_FOR_REGRESSION)
        return
    if num_classes == 1:
        raise ValueError(_NOT_FOR_REGRESSION)
    numbers = value if isinstance(value, (list, tuple)) else None
    if (
        numbers is None
        or len(numbers) < 2
        or not all(_positive_number(w) for w in numbers)
    ):
        raise ValueError(
            "`class_weight` (--class-weight) must be 'balanced' or one positive "
            "weight per class, in class order (e.g. --class-weight 1,4; "
            f"class_weight=[1.0, 4.0]). Received: class_weight={value!r}"
        )
    if num_classes is not None and len(numbers) != num_classes:
        raise ValueError(
            f"`class_weight` (--class-weight) gives {len(numbers)} weights for "
            f"{num_classes} classes: give one per class, in class order (see "
            "--labels), or 'balanced'."
        )


def balanced_class_weights(labels, class_names):
    """`n / (classes * count)` for each class, from the training `labels`
    (class indices; None for unlabelled rows, not counted).

    Args:
        labels: the training examples' class indices.
        class_names: the label set in class order, for the error message.

    Example:
    >>> balanced_class_weights([0, 0, 0, 1], ["neg", "pos"])
    [0.6666666666666666, 2.0]
    """
    counts = [0] * len(class_names)
    for label in labels:
        if label is not None:
            counts[label] += 1
    absent = [
        str(name) for name, count in zip(class_names, counts, strict=True) if not count
    ]
    if absent:
        raise ValueError(
            f"class_weight='balanced' weighs each class by how rare it is in "
            f"the training file, and {', '.join(absent[:5])} has no training "
            "example there. Give the weights (e.g. --class-weight "
            f"{','.join(['1'] * len(class_names))}) or add examples."
        )
    total = sum(counts)
    return [total / (len(counts) * count) for count in counts]


def class_weight_line(config) -> str | None:
    """ "Class weights: neg 0.667, pos 2" for a config with weights, else None.

    Example:
    >>> from albert_keras.tasks.classification_task import ClassificationConfig
    >>> class_weight_line(ClassificationConfig(labels=["neg", "pos"],
    ...                                        class_weight=[2 / 3, 2.0]))
    'Class weights (--class-weight): neg 0.667, pos 2'
    """
    weights = getattr(config, "class_weight", None)
    if not isinstance(weights, list):
        return None
    names = config.labels or range(len(weights))
    pairs = ", ".join(f"{n} {w:.3g}" for n, w in zip(names, weights, strict=False))
    return f"Class weights (--class-weight): {pairs}"


def _positive_number(value):
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


_NOT_FOR_REGRESSION = (
    "`class_weight` (--class-weight) weighs the classes of a classifier; a "
    "regression (num_classes=1, --task regress) has none. Leave it out."
)
