"""`TokenClassificationTask`: a tag for every word (named entities, POS tags)."""

from __future__ import annotations

import collections
import dataclasses
import json

import keras
import numpy as np

from albert_keras.tasks.classification_loss import check_label_smoothing
from albert_keras.tasks.entity_scores import OUTSIDE, is_chunk_scheme, tag_scores
from albert_keras.tasks.jsonl_records import check_kept, collect_examples
from albert_keras.tasks.tagging_records import (
    TAG_KEYS,
    WORD_KEYS,
    find_field,
    is_conll,
    read_tagging_records,
    sequence,
)
from albert_keras.tasks.task import Task, softmax, write_labels_json
from albert_keras.tasks.task_data import TaskData

_FIELD_FLAGS = "Name the words with --text-field and the tags with --label-field"
UNSCORED = "unscored_label"  # the example key holding tags outside the tag set
NO_TAG_SET = (
    "no tag set yet (read the training file first: read(train, training=True); "
    "or declare the tags, --labels / labels=[...])"
)


@dataclasses.dataclass
class TokenClassificationConfig:
    """Settings of a `TokenClassificationTask`.

    Args:
        labels: the tag set in class-index order; None = the training
            file's tags, sorted (`O` first). Integer tags (transformers
            datasets' `ner_tags`) index a declared list of names.
        words_field: the record key of the words; None = the first of
            `WORD_KEYS` (`words`, `tokens`) that the file has.
        tags_field: the record key of the tags; None = the first of
            `TAG_KEYS` (`tags`, `ner_tags`, `labels`, `label`, `pos_tags`,
            `pos`).
        sequence_length: packed length; words past it are not tagged.
        label_smoothing: the share of each word's target spread evenly over
            the tags (transformers' `label_smoothing_factor`); 0: none.
    """

    labels: list | None = None
    words_field: str | None = None
    tags_field: str | None = None
    sequence_length: int = 128
    label_smoothing: float = 0.0

    def __post_init__(self):
        check_label_smoothing(self.label_smoothing, 2)
        if self.labels is not None:
            self.labels = list(self.labels)
            twice = sorted({str(t) for t in self.labels if self.labels.count(t) > 1})
            if twice or len(self.labels) < 2:
                raise ValueError(
                    "The tag set must list 2 or more tags, each once (--labels "
                    f"O,B-PER,I-PER; labels=[...]). Received: {self.labels}"
                )


class TokenClassificationTask(Task):
    """Tagging: one label per word (NER with BIO / IOBES tags, POS tags, ...).

    Records: the words of a sentence and a tag per word: JSON Lines lists
    (`{"words": [...], "tags": [...]}`, or `tokens` / `ner_tags`), CSV/TSV
    cells (a JSON list, or items separated by spaces), or a CoNLL file (a
    word per line, its tag in the last column). Each word is tagged on its
    first piece (`word_pieces`). The model is `AlbertTokenClassifier`; the
    dev metric entity F1 by the conlleval rules where the tags are chunk
    tags, else word accuracy; the baselines are the most common tag and
    each word's most common training tag.

    Example:
    >>> task = TokenClassificationTask()
    >>> data = task.read([{"words": ["Ann", "ran"], "tags": ["B-PER", "O"]}],
    ...                  training=True)
    >>> task.config.labels, data.examples[0]["tags"], task.monitor
    (['O', 'B-PER'], [1, 0], 'entity_f1')
    """

    config_class = TokenClassificationConfig
    prediction_formats = ".jsonl (words, tags, scores) or .conll"
    writes_tables = False
    groups_by_length = True  # training batches only: predict keeps file order

    @property
    def monitor(self):
        labels = self.config.labels or []
        return "entity_f1" if is_chunk_scheme(labels) else "accuracy"

    @property
    def metric_names(self):
        if self.monitor == "accuracy":
            return ("accuracy",)
        return ("entity_f1", "entity_precision", "entity_recall", "accuracy")

    @classmethod
    def config_fields(cls, fields):
        """The CLI's `text_fields` / `label_field` as this task's fields."""
        fields = dict(fields)
        if "text_fields" in fields:
            texts = fields.pop("text_fields")
            if len(texts) != 1:
                raise ValueError("A tagging task reads one words field (--text-field).")
            fields["words_field"] = texts[0]
        if "label_field" in fields:
            fields["tags_field"] = fields.pop("label_field")
        return fields

    def read(self, source, training=False, require_labels=True):
        records, report = read_tagging_records(source)
        check_kept(report, records, _FIELD_FLAGS)
        c = self.config
        words_field = find_field(
            records, c.words_field, WORD_KEYS, "words", "--text-field", report
        )
        try:
            tags_field = find_field(
                records, c.tags_field, TAG_KEYS, "tags", "--label-field", report
            )
        except ValueError:
            if require_labels:
                raise
            tags_field = None  # a file of words alone: predicted, not scored
        self.config = dataclasses.replace(c, words_field=words_field)
        if tags_field is not None:
            self.config = dataclasses.replace(self.config, tags_field=tags_field)
        if training and self.config.labels is None:
            self._set_labels(records)
        make = self._example_maker(require_labels, tags_field)
        return TaskData(collect_examples(records, report, make, _hint), report)

    def _set_labels(self, records):
        found = collections.Counter()
        for _, record in records:
            tags = sequence(record.get(self.config.tags_field))
            found.update(t for t in tags or [] if isinstance(t, (str, int)))
        kinds = {type(t) for t in found}
        if len(kinds) > 1:
            raise ValueError(
                "The training tags mix numbers and names "
                f"({sorted(map(str, found))[:8]}): write them one way, or "
                "declare the tag set with --labels (labels=[...])."
            )
        labels = sorted(found, key=lambda t: (t != OUTSIDE, t))
        if len(labels) < 2:
            raise ValueError(
                f"The training file has {len(labels)} distinct tag(s) {labels}: "
                "tagging needs 2 or more. Check --label-field, or declare the "
                "tag set with --labels."
            )
        self.config = dataclasses.replace(self.config, labels=labels)

    def _example_maker(self, require_labels, tags_field):
        index = _tag_index(self.config.labels or [])
        words_field = self.config.words_field

        def make(record):
            words = sequence(record.get(words_field))
            if not words:
                return f"no words ({words_field})"
            if not all(isinstance(w, str) and w.strip() for w in words):
                return "a word is empty or not a string"
            tags = sequence(record.get(tags_field)) if tags_field else None
            if tags is None:
                return "no tags" if require_labels else _unlabelled(words)
            if len(tags) != len(words):
                return f"{len(words)} words but {len(tags)} tags"
            if not index and require_labels:
                return NO_TAG_SET
            indices = [index.get(_key(t)) for t in tags]
            if None not in indices:
                return {"words": words, "tags": indices}
            if require_labels:
                return "a tag outside the tag set"
            pairs = zip(tags, indices, strict=True)
            outside = sorted({str(t) for t, i in pairs if i is None})
            return dict(_unlabelled(words), **{UNSCORED: outside})

        return make

    def tag_names(self) -> list[str]:
        """The tags as strings, in class order."""
        return [str(label) for label in self.config.labels]

    def features(self, data, tokenizer) -> dict:
        """`data.features` (`tagging_features`), made once per tokenizer."""
        from albert_keras.tasks.tagging_features import tagging_features

        made_from = (data.examples, tokenizer, self.config.sequence_length)
        if data.features is None or data.features_made_from != made_from:
            data.features = tagging_features(
                data.examples, tokenizer, self.config.sequence_length, data.report
            )
            data.features_made_from = made_from
        return data.features

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
        from albert_keras.tasks.tagging_features import tagging_dataset

        features = self.features(data, tokenizer)
        return tagging_dataset(
            features,
            batch_size,
            training,
            seed,
            epochs,
            group_by_length=group_by_length,
        )

    def build_model(self, backbone):
        from albert_keras.models import AlbertTokenClassifier

        return AlbertTokenClassifier(backbone, num_classes=len(self.config.labels))

    def losses(self):
        # The mean over tagged words (the sample weights), as transformers'.
        mean = "mean_with_sample_weight"
        if self.config.label_smoothing:
            from albert_keras.training import ClassWeightedCrossentropy

            e = self.config.label_smoothing
            return {"logits": ClassWeightedCrossentropy(None, e, reduction=mean)}, None
        ce = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=mean
        )
        return {"logits": ce}, None

    def word_predictions(self, model, data, dataset) -> list[np.ndarray]:
        """Per example, the logits of each word (NaN rows: cut off)."""
        from albert_keras.tasks.tagging_features import predict_logits, word_logits

        logits = predict_logits(model, dataset, self.config.sequence_length)
        counts = [len(e["words"]) for e in data.examples]
        return word_logits(logits, data.features["positions"], counts)

    def scores(self, model, data, dataset):
        predicted = self.word_predictions(model, data, dataset)
        return self.metrics([e["tags"] for e in data.examples], predicted)

    def metrics(self, gold, word_logits):
        """Word accuracy, and entity P/R/F1 for chunk tags, of per-word logits."""
        names = self.tag_names()
        fallback = OUTSIDE if OUTSIDE in names else None  # for words cut off
        gold_tags = [[names[i] for i in tags] for tags in gold]
        predicted = [
            [names[int(np.argmax(r))] if np.isfinite(r).all() else fallback for r in x]
            for x in word_logits
        ]
        return tag_scores(gold_tags, predicted, names)

    def baselines(self, train, dev):
        """The most common tag everywhere, and each word's most common
        training tag (unknown words: the most common tag)."""
        names = self.tag_names()
        counts = collections.Counter(t for e in train.examples for t in e["tags"])
        common = counts.most_common(1)[0][0]
        by_word = collections.defaultdict(collections.Counter)
        for example in train.examples:
            for word, tag in zip(example["words"], example["tags"], strict=True):
                by_word[word][tag] += 1
        gold = [[names[i] for i in e["tags"]] for e in dev.examples]
        majority = [[names[common]] * len(tags) for tags in gold]
        per_word = [
            [
                names[by_word[w].most_common(1)[0][0]]
                if w in by_word
                else names[common]
                for w in e["words"]
            ]
            for e in dev.examples
        ]
        return {
            "majority_tag": tag_scores(gold, majority, names),
            "word_majority": tag_scores(gold, per_word, names),
        }

    def text_model(self, model, tokenizer, best=None):
        from albert_keras.models import AlbertTaggerTextModel

        return AlbertTaggerTextModel(
            model,
            tokenizer,
            self.config.sequence_length,
            tags=self.tag_names(),
            dynamic_length=True,
        )

    def write_serving_extras(self, folder):
        """`assets.extra/labels.json`: the tag of each logit, in order."""
        write_labels_json(folder, self.config.labels)

    def scored(self, data):
        return [i for i, e in enumerate(data.examples) if e["tags"] is not None]

    def write_predictions(self, model, data, dataset, output, record):
        """A JSON line per example: `line`, `words`, `tags` (null: cut off)
        and `scores` (each tag's probability). An `output` named `.conll`
        (`.iob`, `.bio`) gets CoNLL lines instead, `word gold predicted`
        (`word predicted` without gold tags; `O` for words cut off), which
        conlleval.pl reads."""
        from albert_keras.atomic_files import atomic_write

        predicted = self.word_predictions(model, data, dataset)
        lines = [
            dict(line=e["line"], words=e["words"], **self.prediction(logits))
            for e, logits in zip(data.examples, predicted, strict=True)
        ]
        with atomic_write(output) as f:
            if is_conll(output):
                f.write(self._conll_text(data, lines))
            else:
                f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
        scored = self.scored(data)
        metrics = None
        if scored:
            gold = [data.examples[i]["tags"] for i in scored]
            metrics = self.metrics(gold, [predicted[i] for i in scored])
        return {"metrics": metrics, "labelled": len(scored)}

    def _conll_text(self, data, lines) -> str:
        names = self.tag_names()
        rows = []
        for example, line in zip(data.examples, lines, strict=True):
            gold = example["tags"]
            for i, word in enumerate(line["words"]):
                tag = line["tags"][i]
                columns = [word, names[gold[i]]] if gold is not None else [word]
                rows.append(" ".join([*columns, OUTSIDE if tag is None else str(tag)]))
            rows.append("")
        return "\n".join(rows) + "\n"

    def prediction(self, logits):
        tags, scores = [], []
        for row in logits:
            if not np.isfinite(row).all():
                tags.append(None)
                scores.append(None)
                continue
            best = int(np.argmax(row))
            tags.append(self.config.labels[best])
            scores.append(round(float(softmax(row)[best]), 6))
        return {"tags": tags, "scores": scores}


def _hint(report):
    """What to fix when no record is usable: the tag set, or the fields."""
    if NO_TAG_SET in report.skipped:
        return "Read the training file first, or declare the tag set (--labels)"
    return _FIELD_FLAGS


def _unlabelled(words):
    return {"words": words, "tags": None}


def _key(tag):
    """A tag as its index key: whole floats (pandas) as ints."""
    if isinstance(tag, float) and tag.is_integer():
        return int(tag)
    return tag


def _tag_index(labels):
    """{tag: class}: names and, for a list of names, integer ids of them (a
    transformers dataset's `ner_tags` with its `names`); digits written as
    strings for integer tags."""
    index = {label: i for i, label in enumerate(labels)}
    for i, label in enumerate(labels):
        if isinstance(label, str):
            index.setdefault(i, i)
            index.setdefault(str(i), i)  # the same id in a CSV cell
        elif isinstance(label, int):
            index.setdefault(str(label), i)
    return index
