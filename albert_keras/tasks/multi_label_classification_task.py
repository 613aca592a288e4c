"""`MultiLabelClassificationTask`: texts -> any number of labels each (topics, tags)."""

from __future__ import annotations

import collections
import dataclasses

import keras
import numpy as np

from albert_keras.tasks.classification_task import (
    OUTSIDE,
    UNSCORED,
    UNSCORED_NOTE,
    label_key,
)
from albert_keras.tasks.jsonl_records import (
    check_kept,
    collect_examples,
    find_text_fields,
    read_records,
    record_texts,
)
from albert_keras.tasks.label_checks import check_label_lines
from albert_keras.tasks.metrics import (
    best_label_thresholds,
    best_threshold,
    multi_label_scores,
)
from albert_keras.tasks.multi_label_records import (
    LABEL_KEYS,
    NO_LABELS,
    column_labels,
    label_ids_index,
    split_labels,
)
from albert_keras.tasks.task import Task, sigmoid, write_labels_json
from albert_keras.tasks.task_data import TaskData

_FIELD_FLAGS = (
    "Name the text with --text-field (a pair: and --text-pair-field) and the "
    "labels with --label-field (several 0/1 columns: --label-field a,b,c)"
)
# The thresholds a run without one chooses from on dev (0.05, 0.10, ... 0.95).
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))
PER_LABEL = "per_label"  # `threshold`: one for each label, chosen on dev


@dataclasses.dataclass
class MultiLabelClassificationConfig:
    """Settings of a `MultiLabelClassificationTask`.

    Args:
        labels: the label set in logit order; None = the training file's
            labels, sorted (or the columns of `label_fields`). Integer labels
            index a declared list of names (a transformers dataset's ids).
        text_fields: the record key of the text, or the two keys of a pair;
            () = found in the training file (`SINGLE_KEYS`, `PAIR_KEYS`).
        pairs: with `text_fields` (), look for a pair (True), a single text
            (False) or whichever the first record has (None).
        sequence_length: packed length; longer texts are cut.
        label_fields: one key holding each record's labels (a list, or a
            string of them separated by `|`, `;` or `,`), or several keys
            each holding 0 or 1 for the label it names (the Jigsaw layout:
            `toxic,obscene,insult`); () = the first of `LABEL_KEYS`.
        threshold: a label is predicted where its sigmoid is above this;
            None = chosen on dev after every epoch: the one of `THRESHOLDS`
            with the best micro F1 (as SQuAD 2.0's no-answer threshold),
            which the best epoch's export and `predict` then apply;
            "per_label" = one for each label, the one of `THRESHOLDS` with
            that label's best dev F1 (`best_label_thresholds`; a small dev
            set overfits them, and its figures are then optimistic).
    """

    labels: list | None = None
    text_fields: tuple = ()
    pairs: bool | None = None
    sequence_length: int = 128
    label_fields: tuple = ()
    threshold: float | str | None = None

    def __post_init__(self):
        for name in ("text_fields", "label_fields"):
            value = getattr(self, name)
            if isinstance(value, str):  # "a,b": several keys, not letters
                value = [v.strip() for v in value.split(",") if v.strip()]
            setattr(self, name, tuple(value))
        if len(self.text_fields) > 2:
            raise ValueError(
                "`text_fields` names one text or the two texts of a pair. "
                f"Received: {self.text_fields}"
            )
        t = self.threshold
        if t not in (None, PER_LABEL) and (
            isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < 1
        ):
            raise ValueError(
                "`threshold` (--threshold) is the probability above which a "
                "label is predicted, between 0 and 1 (or None, --threshold "
                "auto: chosen on dev; 'per_label', --threshold per-label: one "
                f"per label, chosen on dev). Received: {t!r}"
            )
        if self.labels is not None:
            self.labels = list(self.labels)
            keys = [label_key(x) for x in self.labels]
            if None in keys or len(set(keys)) < len(keys) or len(keys) < 2:
                raise ValueError(
                    "The label set must list 2 or more labels (names or "
                    "integers), each once (--labels sports,politics; "
                    f"labels=[...]). Received: {self.labels}"
                )
        if len(self.label_fields) > 1:
            if self.labels is not None and self.labels != list(self.label_fields):
                raise ValueError(
                    f"The labels of 0/1 columns are their names "
                    f"{list(self.label_fields)}; --labels {self.labels} would "
                    "name them otherwise. Leave out --labels, or rename the "
                    "columns."
                )
            self.labels = list(self.label_fields)


class MultiLabelClassificationTask(Task):
    """Multi-label classification: each text (or pair) has any set of labels.

    Records (JSON Lines, or CSV/TSV rows with a header): a text (`text`,
    ...) or a pair, and its labels: a list (`"labels": ["sports",
    "politics"]`, `[]` for none), a cell of them separated by `|`, `;` or
    `,` (or a JSON list), or one 0/1 column per label (`label_fields`). The
    model is `AlbertClassifier(multi_label=True)`: a sigmoid per label,
    binary cross-entropy averaged over labels and examples (transformers'
    `multi_label_classification`). The dev metric is micro F1 (also macro
    F1, exact match and label accuracy) at `threshold`, or at the one chosen
    on dev; the baselines always answer the training set's commonest label
    set, or the labels frequent in training.

    Example:
    >>> task = MultiLabelClassificationTask()
    >>> data = task.read([{"text": "Rain and goals.", "labels": ["weather", "sport"]},
    ...                   {"text": "A quiet day.", "labels": []}], training=True)
    >>> task.config.labels, [e["label"] for e in data.examples]
    (['sport', 'weather'], [[1.0, 1.0], [0.0, 0.0]])
    """

    config_class = MultiLabelClassificationConfig
    monitor = "micro_f1"
    metric_names = ("micro_f1", "macro_f1", "exact_match", "label_accuracy")
    groups_by_length = True
    multi_label = True

    @classmethod
    def config_fields(cls, fields):
        """The CLI's `label_field` ("a" or "a,b,c") as `label_fields`."""
        fields = dict(fields)
        if "label_field" in fields:
            fields["label_fields"] = fields.pop("label_field") or ()
        return fields

    def read(self, source, training=False, require_labels=True):
        records, report = self._records(source)
        check_kept(report, records, _FIELD_FLAGS)
        if not self.config.text_fields:
            fields = find_text_fields(records, self.config.pairs, report)
            self.config = dataclasses.replace(self.config, text_fields=fields)
        if training and self.config.labels is None:
            self._set_labels(records)
        index = label_ids_index(self.config.labels or [])
        examples = collect_examples(
            records,
            report,
            lambda record: self._example(record, index, require_labels),
            _hint(self.config),
        )
        for example in examples:
            if UNSCORED in example:
                report.note(example["line"], UNSCORED_NOTE)
        if training:
            self.label_priors = np.mean([e["label"] for e in examples], axis=0)
        return TaskData(examples, report)

    def _records(self, source):
        """`read_records` with the labels' key, the first of `LABEL_KEYS`
        the file has where `label_fields` names none."""
        fields = self.config.label_fields
        key = fields[0] if fields else LABEL_KEYS[0]
        records, report = read_records(source, False, key)
        if not fields:
            found = next((k for k in LABEL_KEYS if k in report.fields), None)
            if found not in (None, key):  # the first pass mapped another key
                records, report = read_records(source, False, found)
            if found:
                self.config = dataclasses.replace(self.config, label_fields=(found,))
        return records, report

    def _set_labels(self, records):
        """The label set of the training file, refusing what looks like typos."""
        lines = collections.defaultdict(list)
        for number, record in records:
            names = self._names(record)
            for key in map(label_key, names if isinstance(names, list) else []):
                if key is not None:
                    lines[key].append(number)
        check_label_lines(dict(lines), rare_classes=False)
        labels = [key[1] for key in sorted(lines)]
        if len(labels) < 2:
            raise ValueError(
                f"The training file has {len(labels)} distinct label(s) {labels} "
                f"in {self.config.label_fields or LABEL_KEYS}: multi-label "
                "classification needs 2 or more. Name the labels' field with "
                "--label-field, or declare the label set with --labels; for "
                "one label that is true or not, use --task classify."
            )
        self.config = dataclasses.replace(self.config, labels=labels)

    def _names(self, record):
        """The record's labels as a list, None for none given, or the reason
        they cannot be read."""
        fields = self.config.label_fields
        if len(fields) < 2:
            return split_labels(record["label"])
        return column_labels(fields, [record["label"], *map(record.get, fields[1:])])

    def _example(self, record, index, require_labels):
        """{"text_a", "text_b", "label": multi-hot} or the reason to skip."""
        texts = record_texts(record, self.config.text_fields)
        if isinstance(texts, str):
            return texts
        example = {"text_a": texts[0], "text_b": texts[1], "label": None}
        names = self._names(record)
        if isinstance(names, str):
            return names if require_labels else example
        if names is None:
            return NO_LABELS if require_labels else example
        classes = [index.get(label_key(name)) for name in names]
        if None in classes:
            if require_labels:
                return OUTSIDE
            return dict(example, **{UNSCORED: names})
        hot = np.zeros(len(self.config.labels), "float32")
        hot[classes] = 1.0
        return dict(example, label=hot.tolist())

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

        none = [0.0] * len(self.config.labels)
        rows = [
            dict(e, label=none if e["label"] is None else e["label"])
            for e in data.examples
        ]
        return text_dataset(
            rows,
            tokenizer,
            self.config.sequence_length,
            batch_size,
            training,
            seed,
            data.report,
            regression=True,  # float32 labels: the multi-hot rows
            epochs=epochs,
            group_by_length=group_by_length,
        )

    def build_model(self, backbone):
        from albert_keras.models import AlbertClassifier

        n = len(self.config.labels)
        model = AlbertClassifier(backbone, num_classes=n, multi_label=True)
        priors = getattr(self, "label_priors", None)
        if priors is not None and len(priors) == n:
            # Each bias at its label's training log-odds (RetinaNet's prior
            # init): from 0 (p = 0.5 for every label) the first steps push
            # all logits down through the shared pooled output, whose tanh
            # saturates, and the model stays at the label frequencies.
            p = np.clip(priors, 1e-3, 1 - 1e-3)
            model.classifier.bias.assign(np.log(p / (1 - p)).astype("float32"))
        return model

    def losses(self):
        return {"logits": keras.losses.BinaryCrossentropy(from_logits=True)}, None

    def threshold(self) -> float | list:
        """The threshold applied: the config's, else the one chosen on dev for
        the best epoch (`result`, the run's metrics.json; with
        `threshold="per_label"` a list, one per label, from its
        `threshold_<i>`), else 0.5."""
        if self.config.threshold not in (None, PER_LABEL):
            return float(self.config.threshold)
        best = (self.result or {}).get("best") or {}
        if self.config.threshold == PER_LABEL:
            keys = [f"threshold_{i}" for i in range(len(self.config.labels or ()))]
            if keys and all(k in best for k in keys):
                return [float(best[k]) for k in keys]
        return float(best.get("threshold", 0.5))

    def scores(self, model, data, dataset):
        """The dev scores; without a config threshold, at the threshold of
        `THRESHOLDS` with the best micro F1 (ties: the one nearest 0.5),
        or one per label, reported as `threshold`."""
        logits = np.asarray(model.predict(dataset, verbose=0)["logits"])
        if self.config.threshold not in (None, PER_LABEL):
            return self.metrics(data.labels(), logits)
        gold, probabilities = data.labels() > 0.5, sigmoid(logits)
        if self.config.threshold == PER_LABEL:
            # One number per label (`threshold_<i>`, label order): the Keras
            # logs, history.csv and metrics.json keep numbers.
            scores, chosen = best_label_thresholds(gold, probabilities, THRESHOLDS)
            return dict(scores, **{f"threshold_{i}": t for i, t in enumerate(chosen)})
        scores, best = best_threshold(gold, probabilities, THRESHOLDS)
        return dict(scores, threshold=best)

    def metrics(self, labels, logits):
        """The scores of `logits` at the applied `threshold()`."""
        decided = sigmoid(logits) > np.asarray(self.threshold())
        return multi_label_scores(np.asarray(labels) > 0.5, decided)

    def baselines(self, train, dev):
        """Always the training set's commonest label set; and each label's
        training frequency as its probability, thresholded as the model's
        (without a config threshold, at the best of `THRESHOLDS` on dev)."""
        gold = dev.labels().reshape(len(dev.examples), -1) > 0.5
        sets = collections.Counter(tuple(e["label"]) for e in train.examples)
        common = np.asarray(sets.most_common(1)[0][0]) > 0.5
        frequencies = train.labels().reshape(len(train.examples), -1).mean(axis=0)
        constant = np.tile(frequencies, (len(gold), 1))
        if self.config.threshold == PER_LABEL:
            by_frequency, _ = best_label_thresholds(gold, constant, THRESHOLDS)
        elif self.config.threshold is None:
            by_frequency, _ = best_threshold(gold, constant, THRESHOLDS)
        else:
            by_frequency = multi_label_scores(gold, constant > self.threshold())
        return {
            "majority_set": multi_label_scores(gold, np.tile(common, (len(gold), 1))),
            "label_frequencies": by_frequency,
        }

    def text_model(self, model, tokenizer, best=None):
        from albert_keras.models import AlbertTextModel

        c = self.config
        pairs = bool(c.pairs) or len(c.text_fields) == 2
        return AlbertTextModel(
            model, tokenizer, c.sequence_length, dynamic_length=True, pairs=pairs
        )

    def write_serving_extras(self, folder):
        """`assets.extra/labels.json` (the label of each logit, in order) and
        `multi_label.json` (a sigmoid per logit, and the threshold: one
        number, or one per label in the order of labels.json)."""
        import os

        from albert_keras.atomic_files import write_json

        write_labels_json(folder, self.config.labels)
        path = os.path.join(folder, "assets.extra", "multi_label.json")
        write_json(path, {"activation": "sigmoid", "threshold": self.threshold()})

    def scored(self, data):
        return [i for i, e in enumerate(data.examples) if e["label"] is not None]

    def prediction(self, logits):
        probabilities = sigmoid(logits)
        labels = self.config.labels
        above = probabilities > np.asarray(self.threshold())
        return {
            "labels": [x for x, a in zip(labels, above, strict=True) if a],
            "probabilities": {
                str(name): round(float(p), 6)
                for name, p in zip(labels, probabilities, strict=True)
            },
        }


def _hint(config):
    """What to fix when no record is usable: the label set, or the fields."""

    def hint(report):
        if report.skipped.get(OUTSIDE, 0) < report.num_skipped / 2:
            return _FIELD_FLAGS
        if config.labels is None:
            return (
                "The task has no label set yet: read the training file first "
                "(task.read(train, training=True)), or give the labels (--labels)"
            )
        return (
            f"Most labels are outside the label set {config.labels}: declare "
            "the file's labels with --labels (labels=[...] in Python)"
        )

    return hint
