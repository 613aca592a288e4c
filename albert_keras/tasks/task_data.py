"""`TaskData`: the examples of one split, with the report of how they were read."""

from __future__ import annotations

import dataclasses

import numpy as np

from albert_keras.tasks.data_report import DataReport


@dataclasses.dataclass
class TaskData:
    """One split of a task: its examples and what reading it skipped.

    A task's `read` fills `examples` (dicts, each with the `line` it came
    from) and `report`; its `dataset` adds what the model's rows need beyond
    the examples (SQuAD: the windows and their map back to the words).

    Args:
        examples: list of dicts, in file order.
        report: the `DataReport` of the file.
        source: what the file held beyond the examples (SQuAD: its `data`
            list, which the official evaluation scores against).

    Example:
    >>> data = TaskData([{"label": 0, "line": 1}, {"label": 1, "line": 2}],
    ...                 DataReport("x.jsonl"))
    >>> data.labels().tolist(), len(data.subset(1, seed=0).examples)
    ([0, 1], 1)
    """

    examples: list
    report: DataReport
    source: object = None
    features: dict | None = None
    contexts: list | None = None
    features_made_from: tuple | None = None  # what the task made `features` of
    batches: object = None  # the tf.data pipeline made by the task's `dataset`

    def labels(self) -> np.ndarray:
        """The examples' labels as an array (class index, float or option)."""
        return np.asarray([e["label"] for e in self.examples])

    def subset(self, count: int | None, seed: int = 0) -> TaskData:
        """`count` examples drawn at random (seeded), kept in file order.

        Task files are often sorted by label, so the first N would be one
        class. `None` or a count above the size keeps everything.
        """
        if count is None or count >= len(self.examples):
            return self
        rng = np.random.default_rng(seed)
        keep = sorted(rng.choice(len(self.examples), count, replace=False))
        return dataclasses.replace(self, examples=[self.examples[i] for i in keep])

    @property
    def num_rows(self) -> int:
        """Rows the model sees: windows once `features` are made, else examples."""
        if self.features is not None:
            return len(self.features["token_ids"])
        return len(self.examples)
