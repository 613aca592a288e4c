"""`write_prediction_lines`: prediction lines as JSON Lines, or as a CSV or
TSV table (`write_prediction_table`)."""

from __future__ import annotations

import csv
import json
import numbers

TABLE_SUFFIXES = (".csv", ".tsv")


def table_row(line: dict) -> dict:
    """One prediction line as flat columns: a dict's items as `key_name`, a
    list of numbers as `key_0, key_1, ...`, a list of labels joined by `|`
    (as task files write several labels in one cell), None as "".

    Example:
    >>> table_row({"line": 3, "label": "pos", "probabilities": {"pos": 0.8}})
    {'line': 3, 'label': 'pos', 'probabilities_pos': 0.8}
    >>> table_row({"labels": ["a", "b"], "probabilities": [0.1, 0.9]})
    {'labels': 'a|b', 'probabilities_0': 0.1, 'probabilities_1': 0.9}
    """
    row = {}
    for key, value in line.items():
        if isinstance(value, dict):
            row.update({f"{key}_{name}": v for name, v in value.items()})
        elif (
            isinstance(value, list)
            and all(
                isinstance(v, numbers.Number) and not isinstance(v, bool) for v in value
            )
            and value
        ):
            row.update({f"{key}_{i}": v for i, v in enumerate(value)})
        elif isinstance(value, list):
            row[key] = "|".join(str(v) for v in value)
        else:
            row[key] = "" if value is None else value
    return row


def write_prediction_table(f, lines, path) -> None:
    """Writes `lines` (prediction dicts) to the open file `f` as a table with
    a header row, tab-separated where `path` ends with `.tsv`."""
    rows = [table_row(line) for line in lines]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    delimiter = "\t" if path.endswith(".tsv") else ","
    writer = csv.DictWriter(f, columns, restval="", delimiter=delimiter)
    writer.writeheader()
    writer.writerows(rows)


def write_prediction_lines(output, lines) -> None:
    """`lines` (prediction dicts) to `output`, whole or not at all: a table
    where it ends with .csv / .tsv, else a JSON line each."""
    from albert_keras.atomic_files import atomic_write

    with atomic_write(output, newline="") as f:
        if output.endswith(TABLE_SUFFIXES):
            write_prediction_table(f, lines, output)
        else:
            f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
