"""JSON Lines records of a task file (or Python dicts), bad ones reported.

The readers of every task start here: each line must be a JSON object
(with a `label` where labels are required); what is not is skipped and
counted in the `DataReport` with its line number, never an exception in the
middle of a run.
"""

from __future__ import annotations

import json
import os

from albert_keras.tasks.data_report import DataReport


def _open_lines(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"Task file {path!r} does not exist. Pass the path of a JSON Lines file "
            "(one example per line)."
        )
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}): task files are JSON Lines "
            "in UTF-8."
        ) from None
    return text.splitlines()


def _parsed(source):
    """(number, record or the reason it has none) for each non-empty line."""
    if isinstance(source, (list, tuple)):  # Python dicts, numbered from 1
        for number, record in enumerate(source, start=1):
            # A string here is a bad record, not a reason (as below).
            yield number, None if isinstance(record, str) else record
        return
    for number, line in enumerate(_open_lines(source), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError:
            yield number, "malformed JSON"


def read_records(source, require_labels=True):
    """The records of a JSON Lines file (or a list of dicts), and a report.

    Args:
        source: a `.jsonl` path, or a list of dicts (Python use).
        require_labels: skip records without a `label`; False keeps them with
            `label` None (files to predict on).

    Returns:
        (records, report): `(number, dict)` pairs, `number` the 1-based line
        (or list position), and the `DataReport` counting what was skipped.

    Example:
    >>> records, report = read_records([{"text": "a", "label": 1}, {"text": "b"}])
    >>> [n for n, _ in records], report.summary()
    ([1], '<records>: 0 kept, 1 skipped (no label: 1, line 2)')
    """
    report = DataReport(source if isinstance(source, str) else "<records>")
    records = []
    for number, record in _parsed(source):
        if isinstance(record, str):
            report.skip(number, record)
        elif not isinstance(record, dict):
            report.skip(number, "not a JSON object")
        elif "label" not in record and require_labels:
            report.skip(number, "no label")
        else:
            records.append((number, {"label": None, **record}))
    return records, report


def collect_examples(records, report, make, hint):
    """`make(record)` for each record: an example dict (kept, with its `line`)
    or the reason to skip it (counted in `report`); a ValueError naming
    `hint` when nothing is kept."""
    examples = []
    for number, record in records:
        example = make(record)
        if isinstance(example, str):
            report.skip(number, example)
            continue
        examples.append(dict(example, line=number))
        report.kept += 1
    check_kept(report, examples, hint)
    return examples


def check_text(text, optional=False):
    """None when `text` is a non-empty string (or absent and `optional`),
    else the reason to skip the record."""
    if text is None and optional:
        return None
    if not isinstance(text, str):
        return "text is not a string"
    if not text.strip():
        return "empty text"
    return None


def check_kept(report, examples, hint="the record keys"):
    """Raises a ValueError naming the file and the report when nothing is left."""
    if not examples:
        raise ValueError(
            f"{report.summary()}. No usable example in {report.path!r}: check "
            f"{hint} (see the task classes in albert_keras/tasks)."
        )
