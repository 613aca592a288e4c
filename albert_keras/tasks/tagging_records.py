"""Records of a tagging file: words and their tags, as lists, strings or CoNLL.

A record holds the words of a sentence and one tag per word. In JSON Lines
both are lists (`{"words": [...], "tags": [...]}`, or transformers'
`tokens` / `ner_tags`); in CSV/TSV a cell holds a JSON list or the words
separated by spaces. A CoNLL file (`.conll`, `.iob`, `.bio`) has a word per
line, its tag in the last column, and a blank line between sentences
(`-DOCSTART-` lines are document breaks).
"""

from __future__ import annotations

import json
import os

from albert_keras.tasks.data_report import DataReport
from albert_keras.tasks.jsonl_records import open_lines, read_records

# Keys looked for when the fields are not named, in this order.
WORD_KEYS = ("words", "tokens")
TAG_KEYS = ("tags", "ner_tags", "labels", "label", "pos_tags", "pos")
CONLL_EXTENSIONS = (".conll", ".iob", ".iob2", ".bio", ".bioes")


def read_tagging_records(source):
    """(records, report): `(number, dict)` pairs of a file or a list of dicts.

    Args:
        source: a JSON Lines / CSV / TSV / CoNLL path, or a list of dicts.

    Example:
    >>> records, _ = read_tagging_records([{"words": ["Hi"], "tags": ["O"]}])
    >>> records[0][1]["words"]
    ['Hi']
    """
    if is_conll(source):
        return conll_records(source)
    records, report = read_records(source, False, "label")
    for _, record in records:
        if record["label"] is None:  # read_records adds the key
            del record["label"]
    return records, report


def conll_records(path):
    """Sentences of a CoNLL file: `{"words", "tags"}`, numbered by first line.

    A one-column file (words only) gives `tags` None: a file to predict.
    """
    report = DataReport(path)
    report.fields = ["words", "tags"]
    records, rows, first = [], [], None
    for number, line in enumerate([*open_lines(path), ""], start=1):
        columns = line.split()
        if columns and columns[0] != "-DOCSTART-":
            first = first or number
            rows.append(columns)
            continue
        if rows:
            tagged = [len(columns) > 1 for columns in rows]
            words = [columns[0] for columns in rows]
            if all(tagged):
                records.append((first, {"words": words, "tags": [c[-1] for c in rows]}))
            elif any(tagged):
                report.skip(first, "a word without a tag")
            else:
                records.append((first, {"words": words}))
        rows, first = [], None
    return records, report


def find_field(records, given, keys, what, flag, report):
    """`given`, or the first of `keys` that a record has.

    Raises:
        ValueError: naming the file's fields and the flag to set.
    """
    if given:
        return given
    for _, record in records[:100]:
        for key in keys:
            if key in record:
                return key
    fields = ", ".join(map(str, report.fields)) or "none"
    raise ValueError(
        f"No record of {report.path!r} has a {what} field ({' / '.join(keys)}); "
        f"its records have the fields {fields}. Name it with {flag}."
    )


def sequence(value):
    """A list of words or tags from a list, a JSON list string or a string of
    whitespace-separated items; None for anything else."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return None
        else:
            return text.split()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]  # a CSV cell of one tag id
    return None


def is_conll(path) -> bool:
    """Whether `path` is read as CoNLL (by its extension)."""
    return isinstance(path, str) and os.path.splitext(path)[1].lower() in (
        CONLL_EXTENSIONS
    )
