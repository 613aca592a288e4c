"""`DataReport`: what reading a task file kept, skipped and changed, and why."""

from __future__ import annotations

import collections
import dataclasses


@dataclasses.dataclass
class DataReport:
    """Counts of what a task reader did with each record of one file.

    Bad records never stop a run: each is skipped (or, for too-long texts,
    truncated) and counted here under a reason, with the first few line
    numbers so a person can look at them. The fine-tuning CLI prints the
    summary and writes `to_dict()` into its metrics JSON.

    Args:
        path: the file read.
        unit: what the record numbers count: "line" (JSON Lines, CSV, TSV),
            or "question" for SQuAD JSON (its questions in file order).

    Example:
    >>> report = DataReport("train.jsonl")
    >>> report.kept += 2
    >>> report.skip(3, "malformed JSON")
    >>> print(report.summary())
    train.jsonl: 2 kept, 1 skipped (malformed JSON: 1, line 3)
    """

    path: str
    unit: str = "line"
    kept: int = 0
    skipped: collections.Counter = dataclasses.field(
        default_factory=collections.Counter
    )
    noted: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    where: dict = dataclasses.field(default_factory=dict)
    max_listed: int = 5
    fields: list = dataclasses.field(default_factory=list)
    _noted_lines: set = dataclasses.field(default_factory=set, repr=False)

    def skip(self, line: int, reason: str) -> None:
        """Counts one skipped record (`line`: 1-based line or record number)."""
        self.skipped[reason] += 1
        self._locate(line, reason)

    def note(self, line: int, reason: str) -> None:
        """Counts one record kept but changed (e.g. truncated), once per reason.

        A record noted again for the same reason (its data built a second time,
        as a resumed run does) is not counted again.
        """
        if (line, reason) in self._noted_lines:
            return
        self._noted_lines.add((line, reason))
        self.noted[reason] += 1
        self._locate(line, reason)

    def _locate(self, line, reason):
        lines = self.where.setdefault(reason, [])
        if len(lines) < self.max_listed:
            lines.append(line)

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        def reasons(counter):
            parts = []
            for reason, count in counter.most_common():
                lines = ", ".join(str(n) for n in self.where.get(reason, []))
                more = ", ..." if count > len(self.where.get(reason, [])) else ""
                word = self.unit if count == 1 else self.unit + "s"
                parts.append(f"{reason}: {count}, {word} {lines}{more}")
            return "; ".join(parts)

        text = f"{self.path}: {self.kept} kept"
        if self.skipped:
            text += f", {self.num_skipped} skipped ({reasons(self.skipped)})"
        if self.noted:
            text += f"; kept but {reasons(self.noted)}"
        return text

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "kept": self.kept,
            "skipped": dict(self.skipped),
            "noted": dict(self.noted),
            "first_lines": self.where,
        }
