"""`TaskData`: the examples of one split, with the report of how they were read."""

from __future__ import annotations

import copy
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

    def split(self, fraction: float) -> tuple[TaskData, TaskData]:
        """(rest, held_out): `fraction` of the examples held out as a dev set.

        The draw is seeded by nothing but the examples (seed 0), so runs
        with other `--seed`s score the same dev set. Where the labels are
        classes (ints or strings) each class is held out in proportion;
        other labels (numbers, lists, tags) are drawn at random. Both parts
        keep file order, and each has its own report.

        Example:
        >>> examples = [{"label": i % 2, "line": i + 1} for i in range(10)]
        >>> rest, dev = TaskData(examples, DataReport("t.jsonl")).split(0.2)
        >>> [e["label"] for e in dev.examples], dev.report.summary()
        ([0, 1], 't.jsonl (held out): 2 kept')
        """
        rng = np.random.default_rng(0)
        held = []
        for indices in _class_groups(self.examples):
            take = int(round(fraction * len(indices)))
            held += [int(i) for i in rng.permutation(indices)[:take]]
        if not held:  # classes too small to give one each: at random
            count = int(round(fraction * len(self.examples)))
            held = [int(i) for i in rng.permutation(len(self.examples))[:count]]
        if not held or len(held) == len(self.examples):
            raise ValueError(
                f"{fraction:g} of {len(self.examples)} training examples holds "
                f"out {len(held)} for dev: pass a dev file (--dev), or a "
                "fraction that leaves examples on both sides (--dev-fraction)."
            )
        chosen = set(held)
        rest = [e for i, e in enumerate(self.examples) if i not in chosen]
        dev = [self.examples[i] for i in sorted(chosen)]
        report = copy.deepcopy(self.report)
        report.kept = len(rest)
        dev_report = DataReport(f"{self.report.path} (held out)", self.report.unit)
        dev_report.kept = len(dev)
        return (
            dataclasses.replace(self, examples=rest, report=report),
            dataclasses.replace(self, examples=dev, report=dev_report),
        )

    @property
    def num_rows(self) -> int:
        """Rows the model sees: windows once `features` are made, else examples."""
        if self.features is not None:
            return len(self.features["token_ids"])
        return len(self.examples)


def _class_groups(examples) -> list[list[int]]:
    """The example indices by class where every label is an int or a string
    (a class), else one group of them all."""
    labels = [e.get("label") for e in examples]
    if not all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in labels):
        return [list(range(len(examples)))]
    groups = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    return list(groups.values())


def check_dev_source(task, dev, dev_fraction) -> None:
    """Refuses a run with both a dev file and `dev_fraction`, with neither,
    or with `dev_fraction` for a task that cannot hold out its dev set."""
    if (dev is None) == (dev_fraction is None):
        given = "both were" if dev is not None else "neither was"
        raise ValueError(
            f"The dev set is chosen by a dev file (--dev, `dev`) or by a share "
            f"of the training examples (--dev-fraction 0.1, `dev_fraction`); "
            f"{given} given: pass one."
        )
    if dev_fraction is not None and task.no_held_out_dev:
        raise ValueError(
            f"{type(task).__name__} cannot hold out its dev set (--dev-fraction): "
            f"{task.no_held_out_dev}."
        )


def read_train_and_dev(task, train, dev, dev_fraction) -> dict:
    """{"train", "dev"}: `TaskData` of the `train` file and of `dev`, or of
    `dev_fraction` of `train` held out (said in the log)."""
    data = task.read(train, training=True)
    if not dev_fraction:
        return {"train": data, "dev": task.read(dev)}
    print(f"dev: held out of train (--dev-fraction {dev_fraction:g})", flush=True)
    return dict(zip(("train", "dev"), data.split(dev_fraction), strict=True))
