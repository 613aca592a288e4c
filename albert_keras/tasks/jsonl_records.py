"""Records of a task file (JSON Lines, CSV, TSV) or Python dicts, bad ones reported.

The readers of every task start here: each JSON line must be an object, each
CSV/TSV row must match the header (with a label where labels are required);
what is not is skipped and counted in the `DataReport` with its line number,
never an exception in the middle of a run.
"""

from __future__ import annotations

import csv
import json
import os
import re

from albert_keras.tasks.data_report import DataReport
from albert_keras.tokenizers.binary_files import binary_kind, undecodable_line


def open_lines(path):
    """The lines of a UTF-8 task file; folders, binaries and other encodings
    are refused by name."""
    if os.path.isdir(path):
        raise ValueError(
            f"Task file {path!r} is a folder; pass a file in it (.jsonl, .csv "
            "or .tsv, one example per line)."
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"Task file {path!r} does not exist. Pass the path of a JSON Lines "
            "(.jsonl), CSV (.csv) or TSV (.tsv) file, one example per line."
        )
    with open(path, "rb") as f:
        raw = f.read()
    kind = binary_kind(raw[:4096])
    if kind:
        raise ValueError(
            f"Task file {path!r} is {kind}; pass a .jsonl, .csv or .tsv text "
            "file, one example per line."
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = undecodable_line(path, raw, e)
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}, line {line}): save the "
            "task file as UTF-8 (iconv -f cp1252 -t utf-8, or your editor's Save As)."
        ) from None
    # A byte order mark (Excel's "CSV UTF-8") would become part of the first
    # header name or make the first JSON line malformed.
    # Lines end at \n, \r\n or \r only: `str.splitlines` also splits at
    # U+2028, U+0085, form feeds..., which JSON strings hold unescaped.
    return _LINE_END.split(text.removeprefix("\ufeff"))


_LINE_END = re.compile(r"\r\n|\r|\n")


def file_format(path, lines):
    """ "jsonl", "csv" or "tsv": by the extension, else by the first line."""
    extension = os.path.splitext(path)[1].lower()
    if extension in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if extension in (".csv", ".tsv", ".tab"):
        return "csv" if extension == ".csv" else "tsv"
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith(("{", "[")):
        return "jsonl"
    return "tsv" if "\t" in first else "csv" if "," in first else "jsonl"


# A CSV/TSV label that reads as a number becomes one (`1`, `-2`, `0.5`).
_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _cell(text):
    text = text.strip()
    if _INTEGER.match(text):
        return int(text)
    if _NUMBER.match(text):
        return float(text)
    return text


OPEN_QUOTE = (
    'in a field opened by a " and not closed on its line (remove the quote, '
    'or quote the whole field and double the quotes in it: "a ""b"" c")'
)


def _table_rows(lines, delimiter, label_field, path="<table>"):
    """(line number, record or the reason it has none) for each CSV/TSV row."""
    # With their line ends: a quoted field may hold a line break.
    reader = csv.reader((line + "\n" for line in lines), delimiter=delimiter)
    header, last = None, 0
    for row in reader:
        number, last = last + 1, reader.line_num  # a quoted field may span lines
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip() for cell in row]
            _check_header(header, number, path)
            continue
        if last > number and (len(row) != len(header) or _swallowed(row, delimiter)):
            # A stray `"` opened a field that swallowed the lines after it:
            # each of them is lost, not one record.
            for line in range(number, last + 1):
                yield line, OPEN_QUOTE
            continue
        if len(row) != len(header):
            yield number, _field_count(len(row), len(header), delimiter)
            continue
        record = dict(zip(header, row, strict=True))
        if label_field in record:
            label = record[label_field].strip()
            record[label_field] = _cell(label) if label else None
        yield number, record


def _field_count(found, expected, delimiter):
    """Why a row is skipped: its field count, and the likely cause."""
    reason = f"{found} field{'' if found == 1 else 's'} where the header has {expected}"
    if found > expected:
        name = "comma" if delimiter == "," else "tab"
        reason += f" (a {name} in an unquoted text? quote such fields)"
    return reason


def _swallowed(row, delimiter):
    """Whether a TSV field holds whole rows (a line break, then a tab): a
    text never does; a stray quote that a later one closed does."""
    return delimiter == "\t" and any("\t" in cell.partition("\n")[2] for cell in row)


def _check_header(header, number, path):
    """Refuses a header naming a column twice: one of them would be lost."""
    seen = {}
    for column, name in enumerate(header, start=1):
        seen.setdefault(name, []).append(column)
    # Unnamed columns (Excel's trailing empty ones) are never read by name.
    twice = {n: columns for n, columns in seen.items() if n and len(columns) > 1}
    if twice:
        named = "; ".join(
            f"{name!r} in columns {', '.join(map(str, columns))}"
            for name, columns in twice.items()
        )
        raise ValueError(
            f"The header of {path!r} (line {number}) names a column more than "
            f"once ({named}): only the last would be read. Rename the columns "
            "so that each name is used once, then name the ones to use with "
            "the --*-field flags."
        )


def _parsed(source, label_field="label"):
    """(number, record or the reason it has none) for each non-empty line."""
    if isinstance(source, (list, tuple)):  # Python dicts, numbered from 1
        for number, record in enumerate(source, start=1):
            # A string here is a bad record, not a reason (as below).
            yield number, None if isinstance(record, str) else record
        return
    lines = open_lines(source)
    kind = file_format(source, lines)
    if kind != "jsonl":
        delimiter = "," if kind == "csv" else "\t"
        yield from _table_rows(lines, delimiter, label_field, source)
        return
    if next((line for line in lines if line.strip()), "").lstrip().startswith("["):
        yield from enumerate(_json_array(source, lines), start=1)
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError:
            yield number, "malformed JSON"


def _json_array(path, lines):
    """The items of a file holding one JSON array (numbered like list input).

    Read line by line, a pretty-printed array kept the lines that happen to
    be whole objects and skipped the rest: part of the data, silently.
    """
    try:
        return json.loads("\n".join(lines))
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{path!r} starts as a JSON array but is not valid JSON ({e.msg}, "
            f"line {e.lineno} column {e.colno}): fix it, or write JSON Lines "
            "(one object per line)."
        ) from None


def read_records(source, require_labels=True, label_field="label"):
    """The records of a task file (or a list of dicts), and a report.

    Args:
        source: a `.jsonl`, `.csv` or `.tsv` path (CSV/TSV with a header
            row; other extensions are recognized by their first line; a file
            holding one JSON array of objects is read as a list), or a list of
            dicts (Python use).
        require_labels: skip records without a label; False keeps them with
            `label` None (files to predict on).
        label_field: the key (column) holding the label, returned as `label`.

    Returns:
        (records, report): `(number, dict)` pairs, `number` the 1-based line
        (or list position), and the `DataReport` counting what was skipped;
        `report.fields` are the keys of the first record.

    Example:
    >>> records, report = read_records([{"text": "a", "label": 1}, {"text": "b"}])
    >>> [n for n, _ in records], report.summary()
    ([1], '<records>: 0 kept, 1 skipped (no label: 1, line 2)')
    """
    report = DataReport(source if isinstance(source, str) else "<records>")
    records = []
    for number, record in _parsed(source, label_field):
        if isinstance(record, dict) and not report.fields:
            report.fields = list(record)
        if isinstance(record, str):
            report.skip(number, record)
        elif not isinstance(record, dict):
            report.skip(number, "not a JSON object")
        elif _no_label(record.get(label_field)) and require_labels:
            report.skip(
                number,
                "no label" if label_field == "label" else f"no label ({label_field})",
            )
        else:
            record = dict(record)
            label = record.pop(label_field, None)
            record["label"] = None if _no_label(label) else label
            records.append((number, record))
    return records, report


def _no_label(label):
    """None, or a blank string: JSON's "label": "" is a missing label (as an
    empty CSV cell is), not a class named ""."""
    return label is None or (isinstance(label, str) and not label.strip())


def collect_examples(records, report, make, hint):
    """`make(record)` for each record: an example dict (kept, with its `line`)
    or the reason to skip it (counted in `report`); a ValueError naming
    `hint` (a string, or a function of the report) when nothing is kept."""
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
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return "text is a number"
    if not isinstance(text, str):
        return "text is not a string"
    if not text.strip():
        return "empty text"
    return None


def record_texts(record, fields):
    """[text_a, text_b or None] of a record's text `fields` (one key or a
    pair), or the reason to skip it: a field missing, a text empty or not
    a string."""
    missing = [f for f in fields if f not in record]
    if missing:
        return f"no {' / '.join(missing)}"
    texts = [record[f] for f in fields] + [None]
    return check_text(texts[0]) or check_text(texts[1], optional=True) or texts[:2]


def check_kept(report, examples, hint="Name the fields with the --*-field flags"):
    """Raises a ValueError naming the file, its fields and the flags to set
    (`hint`, or `hint(report)` where it is a function) when nothing is left."""
    if not examples and not report.fields and not report.num_skipped:
        raise ValueError(f"No example in {report.path!r}: it holds no record.")
    if not examples:
        hint = hint(report) if callable(hint) else hint
        if "text is a number" in report.skipped:
            numbers = 'Write texts as strings ("123", not 123)'
            hint = f"{numbers}, or {hint[:1].lower()}{hint[1:]}"
        if set(report.skipped) == {"malformed JSON"}:  # a plain text file?
            hint = (
                "It was read as JSON Lines and no line is JSON: write one "
                'object per line ({"text": ..., "label": ...}), or a .csv / '
                ".tsv file with a header row naming its columns"
            )
        found = (
            f"its records have the fields {', '.join(report.fields)}"
            if report.fields
            else "no record could be read"
        )
        raise ValueError(
            f"{report.summary()}. No usable example in {report.path!r}: {found}. "
            f"{hint}." + _headless_hint(report.fields)
        )


# Record keys looked for when `text_fields` is not given, in this order.
SINGLE_KEYS = ("text", "sentence", "text_a")
PAIR_KEYS = (
    ("text_a", "text_b"),
    ("premise", "hypothesis"),
    ("sentence1", "sentence2"),
    ("question", "sentence"),
)


def find_text_fields(records, pairs, report):
    """The text key(s) of the first record that has known ones.

    Args:
        records: `(number, dict)` pairs of `read_records`.
        pairs: look for a pair (True), a single text (False) or either (None).
        report: the file's `DataReport` (its fields name what the file has).

    Example:
    >>> find_text_fields([(1, {"premise": "a", "hypothesis": "b"})], None, None)
    ('premise', 'hypothesis')
    """
    for _, record in records:
        if pairs is not False:
            for a, b in PAIR_KEYS:
                if a in record and b in record:
                    return (a, b)
        if pairs is not True:
            for key in SINGLE_KEYS:
                if key in record:
                    return (key,)
    wanted = [" + ".join(p) for p in PAIR_KEYS] if pairs else list(SINGLE_KEYS)
    fields = ", ".join(report.fields) or "none"
    flags = "--text-field and --text-pair-field" if pairs else "--text-field"
    raise ValueError(
        f"No record of {report.path!r} has the text fields looked for "
        f"({' / '.join(wanted)}); its records have the fields {fields}. Name "
        f"the text field(s) with {flags} (text_fields=(...) in Python)."
        + (_single_text_hint(report.fields) if pairs else "")
        + _headless_hint(report.fields)
    )


def _single_text_hint(fields):
    """A hint when a file read for pairs holds one known text field."""
    single = [key for key in SINGLE_KEYS if key in fields]
    if not single:
        return ""
    return (
        f" Its records hold one text each ({single[0]}): for single texts use "
        "--task classify (or regress)."
    )


def _headless_hint(fields):
    """A hint when a CSV/TSV "header" holds a number (its first row is
    data), or the one record has SQuAD's `data` and `version`."""
    if {"data", "version"} <= set(fields):
        return (
            " It looks like SQuAD JSON: fine-tune on it with --task squad, and "
            "predict it with a model fine-tuned so."
        )
    if not any(_NUMBER.match(str(field).strip()) for field in fields):
        return ""
    return (
        " The first row reads as data: a CSV/TSV file needs a header row "
        "naming its columns (e.g. text,label) before the examples."
    )
