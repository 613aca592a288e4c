"""The labels of a multi-label record: a list, a cell of them, or 0/1 columns."""

from __future__ import annotations

import json

from albert_keras.tasks.classification_task import label_index, label_key

# The record keys looked for when `label_fields` is not given, in this order.
LABEL_KEYS = ("labels", "label")
# Why a record without labels is skipped (the empty set is written []).
NO_LABELS = "no labels (an example with none: [])"
# Between the labels of a CSV/TSV cell (or a string), the first of these found.
SEPARATORS = ("|", ";", ",")


def split_labels(value):
    """A record's labels as a list: a list as it is, a JSON list or a string
    split at the first of `SEPARATORS` it holds, one id or name alone; None
    for none given; the reason for a value that holds no labels.

    Example:
    >>> split_labels("sports|politics"), split_labels('["a b"]'), split_labels(3)
    (['sports', 'politics'], ['a b'], [3])
    """
    if blank(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return "labels are not a JSON list"
        else:
            sep = next((s for s in SEPARATORS if s in text), None)
            value = [x.strip() for x in text.split(sep)] if sep else [text]
            value = [int(x) if x.lstrip("-").isdigit() else x for x in value if x]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        return "labels are not a list"
    if not all(label_key(x) is not None and not isinstance(x, bool) for x in value):
        return "a label is not a name or an integer"
    return value


def blank(value):
    return value is None or (isinstance(value, str) and not value.strip())


def flag(value):
    """A 0/1 column's value as True / False, None for anything else."""
    if isinstance(value, str):
        value = value.strip().lower()
        value = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "true": 1, "false": 0}.get(value)
    if isinstance(value, (bool, int, float)) and value in (0, 1):
        return bool(value)
    return None


def label_ids_index(labels):
    """{label key: logit}: `label_index`, and for a list of names their
    integer ids (a transformers dataset's `labels: [3, 27]`)."""
    index = label_index(labels)
    if labels and all(isinstance(x, str) for x in labels):
        for i in range(len(labels)):
            index.setdefault(("int", i), i)
    return index


def column_labels(fields, values):
    """The labels of one 0/1 column per label (`fields`, their `values` in a
    record): the fields holding 1, None where every value is blank, else the
    reason a value is not 0 or 1.

    Example:
    >>> column_labels(("toxic", "insult"), ["1", 0]), column_labels(("a",), [2])
    (['toxic'], 'a is 2, not 0 or 1')
    """
    if all(blank(v) for v in values):
        return None
    names = []
    for field, value in zip(fields, values, strict=True):
        true = flag(value)
        if true is None:
            return f"{field} is {value!r}, not 0 or 1"
        if true:
            names.append(field)
    return names
