"""`HistoryCsv`: the per-epoch logs as `history.csv`, rewritten whole and atomically."""

from __future__ import annotations

import csv
import io

import keras
import numpy as np

from albert_keras.atomic_files import atomic_write


def read_history_rows(path: str) -> list[dict]:
    """The rows of a `history.csv` as dicts of floats (`epoch` an int); [] if none."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except FileNotFoundError:
        return []
    parsed = []
    for row in rows:
        values = {k: float(v) for k, v in row.items() if k and v not in (None, "")}
        values["epoch"] = int(values.get("epoch", len(parsed)))
        parsed.append(values)
    return parsed


def write_history_rows(path: str, rows: list[dict]) -> None:
    """Writes `rows` (dicts with `epoch`) as CSV, atomically, columns sorted."""
    keys = sorted({k for row in rows for k in row} - {"epoch"})
    text = io.StringIO()
    writer = csv.DictWriter(text, ["epoch", *keys], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with atomic_write(path, newline="") as f:
        f.write(text.getvalue())


class HistoryCsv(keras.callbacks.Callback):
    """Keras' `CSVLogger`, but crash-safe: the file is always whole.

    Each epoch end rewrites the file (earlier rows + this one) through a
    temporary and a rename, so a kill or a full disk never leaves a half row
    or loses the rows before it. A resumed run passes the rows it keeps.

    Args:
        path: the CSV file.
        rows: rows of earlier epochs to keep (dicts with `epoch`), e.g.
            `read_history_rows(path)` filtered to the epochs before a resume.

    Example:
    >>> callback = HistoryCsv("/tmp/history.csv")
    """

    def __init__(self, path: str, rows=()):
        super().__init__()
        self.path = path
        self.rows = [dict(r) for r in rows]

    def on_epoch_end(self, epoch, logs=None):
        row = {"epoch": int(epoch)}
        for key, value in (logs or {}).items():
            if np.ndim(value) == 0:
                row[key] = float(value)
        self.rows = [r for r in self.rows if r["epoch"] != epoch] + [row]
        write_history_rows(self.path, self.rows)
