"""`ClassificationTask`: single texts or text pairs -> classes, or one score."""

from __future__ import annotations

import dataclasses
import math

import keras
import numpy as np

from albert_keras.tasks.class_weights import (
    BALANCED,
    balanced_class_weights,
    check_class_weight,
)
from albert_keras.tasks.classification_loss import (
    check_label_smoothing,
    classification_loss,
)
from albert_keras.tasks.jsonl_records import (
    check_kept,
    collect_examples,
    find_text_fields,
    read_records,
    record_texts,
)
from albert_keras.tasks.label_checks import check_label_lines
from albert_keras.tasks.task import (
    Task,
    majority_baseline,
    softmax,
    write_labels_json,
)
from albert_keras.tasks.task_data import TaskData

_FIELD_FLAGS = (
    "Name the text with --text-field (a pair: and --text-pair-field) and the "
    "label with --label-field"
)


@dataclasses.dataclass
class ClassificationConfig:
    """Settings of a `ClassificationTask`.

    Args:
        num_classes: classes; 1 = regression (one output, mean squared
            error, Pearson / Spearman); None = the number of distinct labels
            of the training file.
        labels: the label set in class-index order (ints or strings); None =
            the training file's distinct labels, sorted.
        text_fields: the record key of the text, or the two keys of a pair;
            () = found in the training file (`SINGLE_KEYS`, `PAIR_KEYS`).
        pairs: with `text_fields` (), look for a pair (True), a single text
            (False) or whichever the first record has (None).
        sequence_length: packed length (`[CLS] a [SEP] b [SEP]`); longer
            texts are cut as the official `_truncate_seq_pair` does.
        label_field: the record key (CSV column) of the label.
        class_weight: None (every row counts the same), "balanced" (each
            class weighed `n / (classes * count)` on the training file; the
            numbers then replace it) or one weight per class, in class
            order: the loss of a row is multiplied by its class's weight
            (`ClassWeightedCrossentropy`).
        label_smoothing: the share of each row's target spread evenly over
            the classes (transformers' `label_smoothing_factor`); 0: none.
    """

    num_classes: int | None = None
    labels: list | None = None
    text_fields: tuple = ()
    pairs: bool | None = False
    sequence_length: int = 128
    label_field: str = "label"
    class_weight: str | list | None = None
    label_smoothing: float = 0.0

    def __post_init__(self):
        if isinstance(self.text_fields, str):  # one key, not its letters
            self.text_fields = (self.text_fields,)
        self.text_fields = tuple(self.text_fields)
        if len(self.text_fields) > 2:
            raise ValueError(
                "`text_fields` names one text or the two texts of a pair. "
                f"Received: {self.text_fields}"
            )
        if self.num_classes is not None and not (
            isinstance(self.num_classes, int)
            and not isinstance(self.num_classes, bool)
            and self.num_classes >= 1
        ):
            raise ValueError(
                "`num_classes` must be a positive integer (1 for regression), "
                f"or None to count the training labels. Received: "
                f"num_classes={self.num_classes!r}"
            )
        if self.labels is not None:
            _check_declared(self.labels)
            if self.num_classes is None:
                self.num_classes = len(self.labels)
            elif self.num_classes != len(self.labels):
                raise ValueError(
                    f"num_classes={self.num_classes} but labels has "
                    f"{len(self.labels)}: {self.labels[:10]}"
                )
        if isinstance(self.class_weight, tuple):
            self.class_weight = list(self.class_weight)
        check_class_weight(self.class_weight, self.num_classes)
        check_label_smoothing(self.label_smoothing, self.num_classes)


class ClassificationTask(Task):
    """Sentence or sentence-pair classification, or regression (GLUE-style).

    Records (JSON Lines, or CSV/TSV rows with a header): a text (`text`, or
    the key in `text_fields`) or a pair (`text_a`/`text_b`,
    `premise`/`hypothesis`, ...) and a `label` (or the `label_field`; an int
    or a string, a number for regression). The model is
    `AlbertClassifier`; the dev metric accuracy (also F1 and Matthews
    correlation), or Pearson for regression; the baseline the training
    set's majority class, or its mean.

    Example:
    >>> task = ClassificationTask(num_classes=2, text_fields=("text",))
    >>> data = task.read([{"text": "A fine film.", "label": 1},
    ...                   {"text": "Dull.", "label": 0}], training=True)
    >>> task.config.labels, [e["label"] for e in data.examples]
    ([0, 1], [1, 0])
    """

    config_class = ClassificationConfig
    groups_by_length = True

    @property
    def regression(self) -> bool:
        return self.config.num_classes == 1

    @property
    def monitor(self):
        return "pearson" if self.regression else "accuracy"

    @property
    def metric_names(self):
        return ("pearson", "spearman") if self.regression else super().metric_names

    def read(self, source, training=False, require_labels=True):
        records, report = read_records(source, require_labels, self.config.label_field)
        check_kept(report, records, _FIELD_FLAGS)
        if not self.config.text_fields:
            fields = find_text_fields(records, self.config.pairs, report)
            self.config = dataclasses.replace(self.config, text_fields=fields)
        if training and not self.regression and self.config.labels is None:
            self._set_labels(records)
        index = label_index(self.config.labels or [])
        examples = collect_examples(
            records,
            report,
            lambda record: self._example(record, index, require_labels),
            self._no_example_hint,
        )
        for example in examples:
            if UNSCORED in example:
                report.note(example["line"], UNSCORED_NOTE)
        if training and self.config.class_weight == BALANCED:
            weights = balanced_class_weights(
                [e["label"] for e in examples], self.config.labels
            )
            self.config = dataclasses.replace(self.config, class_weight=weights)
        check_class_weight(self.config.class_weight, self.config.num_classes)
        return TaskData(examples, report)

    def _no_example_hint(self, report):
        """What to fix when no record is usable: the fields, or the labels."""
        if report.skipped.get(OUTSIDE, 0) < report.num_skipped / 2:
            return _FIELD_FLAGS
        if self.config.labels is None:
            return (
                "The task has no label set yet: read the training file first "
                "(task.read(train, training=True) sets it), or give the labels "
                "(labels=[...], --labels)"
            )
        return (
            f"Most labels are outside the label set {self.config.labels}: "
            "declare the file's labels with --labels (labels=[...] in Python), "
            "or write them as the label set does"
        )

    def _set_labels(self, records):
        """The label set from the training file, refusing what looks like typos."""
        lines, unusable = {}, []
        for number, r in records:
            key = label_key(r["label"])
            if key is None:
                unusable.append(f"{r['label']!r} on line {number}")
            else:
                lines.setdefault(key, []).append(number)
        check_label_lines(lines)
        labels = [key[1] for key in sorted(lines)]
        if len(labels) < 2 and self.config.num_classes is None:
            others = (
                f" ({len(unusable)} label(s) are neither whole numbers nor "
                f"strings: {', '.join(unusable[:3])})"
                if unusable
                else ""
            )
            raise ValueError(
                f"The training file has {len(labels)} distinct label(s) "
                f"{labels}{others}: "
                "classification needs 2 or more. Declare all the classes with "
                "--labels (e.g. --labels neg,pos; labels=[...] in Python) to "
                "train anyway, or, if the label is a score, use --task regress "
                "(num_classes=1 in Python)."
            )
        if self.config.num_classes not in (None, len(labels)):
            raise ValueError(
                f"num_classes={self.config.num_classes} but the training file has "
                f"{len(labels)} distinct labels {labels[:10]}: pass labels=[...] "
                "in class order, or the right num_classes."
            )
        self.config = dataclasses.replace(
            self.config, labels=labels, num_classes=len(labels)
        )

    def _example(self, record, index, require_labels):
        """{"text_a", "text_b", "label"} or the reason to skip the record."""
        texts = record_texts(record, self.config.text_fields)
        if isinstance(texts, str):
            return texts
        label = record["label"]
        if label is None and not require_labels:
            pass
        elif self.regression:
            label = _number(label)
            if isinstance(label, bool) or not isinstance(label, (int, float)):
                return "label is not a number"
            if not math.isfinite(label):
                return "label is not finite"
            label = float(label)
        else:
            key = label_key(label)
            if key not in index and require_labels:
                return OUTSIDE
            if key not in index:  # predicted, not scored
                example = {"text_a": texts[0], "text_b": texts[1], "label": None}
                return dict(example, **{UNSCORED: label})
            label = index[key]
        return {"text_a": texts[0], "text_b": texts[1], "label": label}

    def dataset(
        self,
        data,
        tokenizer,
        batch_size,
        training=False,
        seed=0,
        epochs=None,
        group_by_length=False,
    ):
        from albert_keras.tasks.task_datasets import text_dataset

        return self.packed_dataset(
            text_dataset,
            data,
            tokenizer,
            batch_size,
            training,
            seed,
            epochs,
            regression=self.regression,
            group_by_length=group_by_length,
        )

    def build_model(self, backbone):
        from albert_keras.models import AlbertClassifier

        return AlbertClassifier(backbone, num_classes=self.config.num_classes)

    def losses(self):
        if self.regression:
            return {"logits": keras.losses.MeanSquaredError()}, None
        return {"logits": classification_loss(self.config)}, None

    def metrics(self, labels, logits):
        from albert_keras.tasks.dev_evaluation import (
            classification_scores,
            regression_scores,
        )

        logits = np.asarray(logits)
        if self.regression:
            return regression_scores(labels, logits)
        return classification_scores(labels, logits, self.config.num_classes)

    def baselines(self, train, dev):
        from albert_keras.tasks.dev_evaluation import regression_scores

        if self.regression:
            constant = np.full(len(dev.examples), train.labels().mean())
            return {"train_mean": regression_scores(dev.labels(), constant)}
        return majority_baseline(train, dev, self.config.num_classes)

    def text_model(self, model, tokenizer, best=None):
        from albert_keras.models import AlbertTextModel

        c = self.config  # a regress run finds a pair in its file (pairs None)
        pairs = bool(c.pairs) or len(c.text_fields) == 2
        # Each served slice pads to its longest row (short texts cost less).
        return AlbertTextModel(
            model, tokenizer, c.sequence_length, dynamic_length=True, pairs=pairs
        )

    def write_serving_extras(self, folder):
        """`assets.extra/labels.json`: the label of each logit, in order (the
        SavedModel's outputs are logits only)."""
        if self.regression:
            return
        labels = self.config.labels or list(range(self.config.num_classes))
        write_labels_json(folder, labels)

    def scored(self, data):
        """The examples with a label in the label set (a file may mix them
        with unlabelled ones, or ones whose label is not the run's)."""
        return [i for i, e in enumerate(data.examples) if e["label"] is not None]

    def prediction(self, logits):
        if self.regression:
            return {"prediction": float(logits[0])}
        labels = self.config.labels or list(range(self.config.num_classes))
        probabilities = softmax(logits)
        return {
            "label": labels[int(np.argmax(logits))],
            "probabilities": {
                str(name): round(float(p), 6)
                for name, p in zip(labels, probabilities, strict=True)
            },
        }


# Why a labelled record is skipped (training, dev) or, predicting, kept
# without a score: its label is not one of the task's labels.
OUTSIDE = "label outside the label set"
UNSCORED = "unscored_label"  # the example key holding that label
UNSCORED_NOTE = "label outside the label set (predicted, not scored)"


def _check_declared(labels):
    """Refuses a declared label set with a label twice, or fewer than two."""
    keys = [label_key(label) for label in labels]
    twice = sorted({repr(k[1]) for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(
            f"The label set {list(labels)} names {', '.join(twice)} more than "
            "once: each class would be a class of its own, one of them never "
            "trained. List each label once (--labels, labels=[...])."
        )
    if len(labels) < 2:
        raise ValueError(
            f"The label set {list(labels)} has {len(labels)} label(s): "
            "classification needs 2 or more. List all the classes (--labels "
            "neg,pos); for a score use --task regress (num_classes=1)."
        )


def _number(label):
    """A regression target written as a string ("0.5") as its number."""
    if isinstance(label, str):
        try:
            return float(label.strip())
        except ValueError:
            return label
    return label


def label_index(labels):
    """{label key: class}: an integer class also matches its digits written
    as a string ("1" in JSON; `--labels 0,1` cannot say "0", "1"), a
    class "1" the integer 1 (a dev file written by another tool), and a
    class "true" / "false" JSON's true / false (`--labels true,false`)."""
    index = {label_key(v): i for i, v in enumerate(labels)}
    for i, v in enumerate(labels):
        if isinstance(v, int) and not isinstance(v, bool):
            index.setdefault(("str", str(v)), i)
        elif isinstance(v, str) and v.isascii() and v.lstrip("-").isdigit():
            index.setdefault(("int", int(v)), i)
        elif isinstance(v, str) and v.strip().lower() in ("true", "false"):
            index.setdefault(("bool", v.strip().lower() == "true"), i)
    return index


def label_key(value):
    """(kind, label) of a class label, or None for a value that is none.

    A whole float is its integer (`1.0` is class `1`: pandas writes integer
    labels as floats once a column has a gap); true/false are their own
    kind, never the numbers 1 and 0.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (bool, int, str)):
        return (type(value).__name__, value)
    return None
