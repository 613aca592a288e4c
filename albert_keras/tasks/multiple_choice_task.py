"""`MultipleChoiceTask`: a context and N options -> the right option (RACE-style)."""

from __future__ import annotations

import collections
import dataclasses
import json

import numpy as np

from albert_keras.tasks.classification_loss import (
    check_label_smoothing,
    classification_loss,
)
from albert_keras.tasks.jsonl_records import (
    check_text,
    collect_examples,
    read_records,
)
from albert_keras.tasks.task import Task, majority_baseline, softmax
from albert_keras.tasks.task_data import TaskData


@dataclasses.dataclass
class MultipleChoiceConfig:
    """Settings of a `MultipleChoiceTask`.

    Args:
        num_choices: options per example; None = the most common count of
            the first file read (records with another count are skipped).
        sequence_length: packed length of each `[CLS] context [SEP] option
            [SEP]` row.
        context_field, question_field, options_field, label_field: the
            record keys (CSV columns); a question, when there is one,
            follows the context. The options are a list, or in CSV a JSON
            list; `options_field` may also name several columns, separated
            by commas ("A,B,C,D"), one option each.
        label_smoothing: the share of each example's target spread evenly
            over its options (transformers' `label_smoothing_factor`); 0: none.
    """

    num_choices: int | None = None
    sequence_length: int = 128
    context_field: str = "context"
    question_field: str = "question"
    options_field: str = "options"
    label_field: str = "label"
    label_smoothing: float = 0.0

    def __post_init__(self):
        check_label_smoothing(self.label_smoothing, None)
        n = self.num_choices
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 2):
            raise ValueError(
                "`num_choices` must be an integer of at least 2 (the options "
                "per example; with one, its softmax is always 1), or None for "
                f"the training file's most common count. Received: num_choices={n!r}"
            )


class MultipleChoiceTask(Task):
    """Multiple choice: one score per option, softmax over the options.

    Records (JSON Lines, or CSV/TSV with a header): `context` [+
    `question`], `options` (a list of strings, the same count in every
    record) and `label` (the index of the right option, or its letter A, B,
    ...); other field names through the config's `*_field`s. The model is
    `AlbertMultipleChoice`; the dev metric accuracy; the baseline the
    training set's most common answer position.

    Example:
    >>> task = MultipleChoiceTask()
    >>> data = task.read([{"context": "It rains.", "options": ["wet", "dry"],
    ...                    "label": 0}], training=True)
    >>> task.config.num_choices, data.examples[0]["options"]
    (2, ['wet', 'dry'])
    """

    config_class = MultipleChoiceConfig
    groups_by_length = True

    def read(self, source, training=False, require_labels=True):
        records, report = read_records(source, require_labels, self.config.label_field)
        if self.config.num_choices is None:
            self._set_num_choices(records)
        examples = collect_examples(
            records,
            report,
            lambda record: self._example(record, require_labels),
            "Name the fields with --context-field, --question-field, "
            "--options-field and --label-field",
        )
        return TaskData(examples, report)

    def _set_num_choices(self, records):
        """The most common option count (the first record's could be the
        odd one out, and every record with another count is skipped)."""
        counts = collections.Counter(
            len(options)
            for _, record in records
            if isinstance(options := _options(record, self.config), list) and options
        )
        if counts:
            (most, _), *_ = counts.most_common(1)
            if most < 2:
                raise ValueError(
                    f"Most records have {most} option: choosing among one "
                    "scores 100% whatever the model does. Give each record "
                    f"2 or more options ({self.config.options_field!r}: a list, "
                    "or several columns, --options-field A,B,C)."
                )
            self.config = dataclasses.replace(self.config, num_choices=most)

    def _example(self, record, require_labels):
        c = self.config
        context, options = record.get(c.context_field), _options(record, c)
        question = record.get(c.question_field)
        if isinstance(question, str):
            # No context field at all (CommonsenseQA-style): the question alone.
            context = (
                question
                if c.context_field not in record
                else (f"{context} {question}" if context else None)
            )
        problem = check_text(context)
        if problem:
            return f"context: {problem}"
        if not isinstance(options, list) or not options:
            return _no_options(options)
        if any(check_text(o) for o in options):
            return "an option is empty or not a string"
        if c.num_choices is None:
            self.config = dataclasses.replace(c, num_choices=len(options))
        if len(options) != self.config.num_choices:
            return f"not {self.config.num_choices} options"
        label = record["label"]
        if isinstance(label, str) and len(label) == 1 and "A" <= label <= "Z":
            label = ord(label) - ord("A")  # RACE-style letters
        elif isinstance(label, str) and label.strip().isascii():
            label = int(label) if label.strip().isdigit() else label  # "1"
        elif isinstance(label, float) and label.is_integer():
            label = int(label)  # 1.0
        if not (label is None and not require_labels) and (
            isinstance(label, bool)
            or not isinstance(label, int)
            or not 0 <= label < self.config.num_choices
        ):
            return "label is not an option index"
        return {"context": context, "options": options, "label": label}

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
        from albert_keras.tasks.task_datasets import choice_dataset

        return self.packed_dataset(
            choice_dataset,
            data,
            tokenizer,
            batch_size,
            training,
            seed,
            epochs,
            group_by_length=group_by_length,
        )

    def build_model(self, backbone):
        from albert_keras.models import AlbertMultipleChoice

        return AlbertMultipleChoice(backbone, num_choices=self.config.num_choices)

    def losses(self):
        return {"logits": classification_loss(self.config)}, None

    def metrics(self, labels, logits):
        from albert_keras.tasks.dev_evaluation import classification_scores

        return classification_scores(
            labels, np.asarray(logits), self.config.num_choices
        )

    def baselines(self, train, dev):
        return majority_baseline(train, dev, self.config.num_choices)

    def text_model(self, model, tokenizer, best=None):
        from albert_keras.models import AlbertChoiceTextModel

        return AlbertChoiceTextModel(
            model, tokenizer, self.config.sequence_length, dynamic_length=True
        )

    def prediction(self, logits):
        return {
            "label": int(np.argmax(logits)),
            "probabilities": [round(float(p), 6) for p in softmax(logits)],
        }


def _options(record, config):
    """The options of a record: a list, a JSON list string, or several columns."""
    names = config.options_field.split(",")
    if len(names) > 1:
        values = [record.get(name.strip()) for name in names]
        return None if any(v is None for v in values) else values
    options = record.get(config.options_field)
    if isinstance(options, str) and options.lstrip().startswith("["):
        try:
            return json.loads(options)
        except json.JSONDecodeError:
            return None
    return options


def _no_options(options) -> str:
    """Why a record has no options to choose from: none, or text not a list.

    Args:
        options: what `_options` found (None, an empty list, a string...).

    Returns:
        The reason the record is skipped, as the data report counts it.
    """
    if isinstance(options, str) and options.strip():
        # A CSV cell "fast, slow" was skipped as "no options list".
        return (
            'options not a list (a CSV/TSV cell holds a JSON list, ["a", "b"], '
            "or --options-field A,B names a column per option)"
        )
    return "no options list"
