"""`data_warnings`: what in the data would make a run's figures mislead.

Checked once the splits are read and packed, printed before training and
kept in `metrics.json` (`warnings`). Nothing here stops a run: the data may
be right, but the person reading the scores must know.
"""

from __future__ import annotations

import os

import numpy as np

# Above this share of the examples cut by the sequence length, say so.
MOST_CUT = 0.5
# Above this share of a file's records skipped, say so again.
SKIPPED_SHARE = 0.1
# A majority class this common makes accuracy a poor score.
DOMINANT_CLASS = 0.9


def data_warnings(task, splits, sequence_length) -> list[str]:
    """The warnings for a task's `{"train", "dev"}` `TaskData` (packed).

    Args:
        task: the `Task` (its config names the label set).
        splits: `{"train", "dev"}` `TaskData`, after `task.dataset` (which
            counts the truncated examples in each report).
        sequence_length: the packed length (`--max-seq-length`).

    Returns:
        Sentences, each naming the problem, its size and the fix.

    Example:
    >>> from albert_keras.tasks import ClassificationTask
    >>> task = ClassificationTask(labels=[0, 1], text_fields=("text",))
    >>> dev = task.read([{"text": "a", "label": 1}, {"text": "b", "label": 1}])
    >>> data_warnings(task, {"train": dev, "dev": dev}, 128)[0][:48]
    'Every dev example has the label 1: dev accuracy '
    """
    found = []
    for name, data in splits.items():
        found += _cut_warnings(name, data, sequence_length)
    found += _dev_is_train(splits)
    for name in ("train", "dev"):
        found += _many_skipped(name, splits[name].report)
    found += _one_dev_example(task, splits["dev"])
    found += _unread_partner(task, splits["train"])
    found += _unscored_dev(task, splits["dev"])
    if getattr(task, "multi_label", False):
        found += _multi_label_warnings(task, splits)
    else:
        found += _label_warnings(task, splits["dev"], "dev")
    if not _is_regression(task) and not getattr(task, "multi_label", False):
        found += _label_warnings(task, splits["train"], "training", splits["dev"])[:1]
    found += _tag_warnings(task, splits["dev"])
    return found


def _tag_warnings(task, dev):
    """Tagging: tags that are numbers (ids whose names were not given: no
    entity scores), or a dev tag so common that word accuracy says little."""
    if not dev.examples or "tags" not in dev.examples[0]:
        return []
    labels = task.config.labels
    found = []
    if all(isinstance(t, int) for t in labels):
        found.append(
            f"The tags are numbers ({', '.join(map(str, labels[:6]))}"
            f"{', ...' if len(labels) > 6 else ''}): they are scored by word "
            "accuracy only. If they are ids of named tags (a transformers "
            "dataset's ner_tags), give the names in id order with --labels "
            "(e.g. --labels O,B-PER,I-PER,...) to score entities."
        )
    tags = np.concatenate([e["tags"] for e in dev.examples if e["tags"]] or [[]])
    if tags.size > 1 and task.monitor == "accuracy":
        values, counts = np.unique(tags.astype(int), return_counts=True)
        share = counts.max() / counts.sum()
        if share >= DOMINANT_CLASS:
            common = labels[int(values[counts.argmax()])]
            found.append(
                f"{share:.0%} of the dev words have the tag {common!r}: word "
                "accuracy is high by answering it always; compare with the "
                "majority_tag baseline."
            )
    return found


def _multi_label_warnings(task, splits):
    """Multi-label: labels no training example has (never learned), and
    labels every example of a split has (always answering them is right)."""
    labels = task.config.labels
    found = []
    for name in ("train", "dev"):
        data = splits[name]
        if not data.examples or data.examples[0]["label"] is None:
            continue
        counts = np.asarray([e["label"] for e in data.examples]).sum(axis=0)
        never = [labels[i] for i in np.flatnonzero(counts == 0)]
        always = [labels[i] for i in np.flatnonzero(counts == len(data.examples))]
        if never and name == "train":
            found.append(
                f"No training example has the label(s) {_some(never)}: the model "
                "never learns to predict them. Add examples of them, or leave "
                "them out of --labels."
            )
        if always and len(data.examples) > 1:
            found.append(
                f"Every {name} example has the label(s) {_some(always)}: "
                "predicting them always is right there; compare with the "
                "label_frequencies and majority_set baselines."
            )
    return found


def _some(names, most=6):
    shown = ", ".join(map(repr, names[:most]))
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _cut_warnings(name, data, sequence_length):
    reason = f"cut to sequence_length={sequence_length}"
    total = len(data.examples)
    cut = min(data.report.noted.get(reason, 0), total)
    if not total or cut <= MOST_CUT * total:
        return []
    return [
        f"{cut:,} of {total:,} {name} examples ({cut / total:.0%}) are longer than "
        f"--max-seq-length {sequence_length} tokens and are cut: the model never "
        "sees their ends. Raise --max-seq-length (256 or 512) if the label depends "
        "on the whole text."
    ]


def _many_skipped(name, report):
    """A tenth or more of a file's records skipped: said again at the end
    (the summary line at the start scrolls away). Dev labels outside the
    label set have their own warning."""
    from albert_keras.tasks.classification_task import OUTSIDE

    skipped = report.num_skipped - (
        report.skipped.get(OUTSIDE, 0) if name == "dev" else 0
    )
    total = report.num_skipped + report.kept
    if not total or skipped < SKIPPED_SHARE * total:
        return []
    reasons = "; ".join(
        f"{reason}: {count:,}"
        for reason, count in report.skipped.most_common(3)
        if not (name == "dev" and reason == OUTSIDE)
    )
    if name != "dev" and report.skipped.most_common(1)[0][0] == OUTSIDE:
        advice = (
            "Labels outside --labels (labels=[...]) are left out as declared; "
            "list them in --labels to train on them."
        )
    else:
        advice = "Fix those records, or name the fields with the --*-field flags."
    return [
        f"{skipped:,} of {total:,} {name} records ({skipped / total:.0%}) were "
        f"skipped ({reasons}; first {report.unit}s in metrics.json, data). "
        f"{advice}"
    ]


def _one_dev_example(task, dev):
    """A dev set of one: the best epoch is chosen on a coin (and Pearson and
    Spearman, defined on two scores or more, read 0)."""
    if len(dev.examples) != 1 or "label" not in dev.examples[0]:
        return []
    what = (
        "Pearson and Spearman are undefined on one score (they read 0), so "
        "the first epoch is always kept"
        if _is_regression(task)
        else "its score is 0 or 1, so the best epoch is chosen by chance"
    )
    return [f"The dev set has 1 example: {what}. Use a dev set of many examples."]


def _dev_is_train(splits):
    """--dev naming the training file: the best epoch is the best memorizer."""
    paths = [splits[name].report.path for name in ("train", "dev")]
    if not all(os.path.isfile(p) for p in paths) or not os.path.samefile(*paths):
        return []
    return [
        f"--dev is the training file ({paths[1]}): the dev scores measure how "
        "well the model remembers its training examples, not how it does on "
        "new ones. Hold out a dev file the model does not train on."
    ]


def _unread_partner(task, data):
    """A single-text run on a file of pairs (`text_a` and `text_b`, ...):
    half of each example is never read, and nothing else says so."""
    from albert_keras.tasks.jsonl_records import PAIR_KEYS

    fields = getattr(task.config, "text_fields", ())
    if len(fields) != 1 or not data.report.fields:
        return []
    partners = [b for a, b in PAIR_KEYS if a == fields[0]]
    unread = [b for b in partners if b in data.report.fields]
    if not unread:
        return []
    return [
        f"The training records pair {fields[0]!r} with {unread[0]!r}, but this "
        f"run reads {fields[0]!r} alone: for two texts per example use --task "
        f"pair (--text-field {fields[0]} --text-pair-field {unread[0]})."
    ]


def _unscored_dev(task, dev):
    """Dev records whose label the training file never had: skipped, so the
    dev scores leave them out; the summary line alone is easy to miss."""
    from albert_keras.tasks.classification_task import OUTSIDE

    skipped = dev.report.skipped.get(OUTSIDE, 0)
    if not skipped:
        return []
    total = skipped + len(dev.examples)
    lines = ", ".join(map(str, dev.report.where.get(OUTSIDE, [])))
    return [
        f"{skipped:,} of {total:,} dev records ({skipped / total:.0%}; "
        f"line{'s' if skipped > 1 else ''} "
        f"{lines}{', ...' if skipped > 5 else ''}) have a label outside the "
        f"label set {task.config.labels}: they are skipped and the dev scores "
        "leave them out. To score them, declare every class with --labels."
    ]


def _is_regression(task):
    return bool(getattr(task, "regression", False))


def _label_name(task, index):
    labels = getattr(task.config, "labels", None)
    if labels and not _is_regression(task):
        return repr(labels[int(index)])
    if hasattr(task.config, "num_choices"):
        return f"option {int(index) + 1}"
    return repr(index)


def _label_warnings(task, data, name, dev=None):
    """A constant or dominant label: accuracy then says nothing.

    `dev`, given for the training set, scores its constant answer there: that
    is the majority_class baseline the run prints.
    """
    if not data.examples or "label" not in data.examples[0]:
        return []  # SQuAD: answers, not labels
    labels = data.labels()
    if labels.dtype == object or labels.size < 2:
        return []
    if _is_regression(task):
        if np.ptp(labels.astype(float)) == 0:
            return [
                f"Every {name} example has the score {labels[0]}: Pearson and "
                "Spearman are undefined. Use a set whose scores vary."
            ]
        return []
    values, counts = np.unique(labels, return_counts=True)
    share = counts.max() / counts.sum()
    common = _label_name(task, values[counts.argmax()])
    score = "accuracy" if name == "dev" else "the model"
    if len(values) == 1:
        return [_constant_label(common, values[0], name, dev)]
    if share >= DOMINANT_CLASS:
        return [
            f"{share:.0%} of the {name} examples have the label {common}: "
            f"{score} is high by answering it always; compare with the "
            "majority baseline and read MCC and F1."
        ]
    return []


def _constant_label(common, value, name, dev):
    """The warning for a split whose every example has the label `common`."""
    if name == "dev":
        what = f"dev accuracy measures nothing (always answering {common} scores 1.0)"
    else:
        what = (
            "the model learns to answer it whatever the input. Always answering "
            f"{common} scores accuracy 1.0 on the training set"
        )
        labels = dev.labels() if dev is not None and dev.examples else None
        if labels is not None and labels.dtype != object:
            share = float(np.mean(labels == value))
            what += f" and {share:.4f} on dev (the majority_class baseline)"
    return (
        f"Every {name} example has the label {common}: {what}. Use a {name} "
        "set with every class."
    )
