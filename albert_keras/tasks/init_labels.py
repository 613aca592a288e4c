"""Whether an `--init` run's classifier head may be reused: its labels.

A fine-tuned classifier given as `--init` (its `best.keras`, or its run
folder) gave its whole head whenever the shapes fitted, even when the new
training file names other labels: class 0 of the old run (say `neg`) then
started as class 0 of the new one (say `entailment`). The run's
`settings.json` beside the model lists its labels; a head is reused only
for the same labels in the same order.
"""

from __future__ import annotations


def init_labels(init) -> list | None:
    """The labels of the fine-tuning run `init` comes from, else None (a
    settings.json that is not JSON too: nothing is known of its labels).

    Args:
        init: a `.keras` path or a run folder (anything else: None).

    Example:
    >>> init_labels("albert_tiny") is None
    True
    """
    from checkpoints_convert.backbone_loader import run_labels

    try:
        return run_labels(init)
    except ValueError:
        return None


def other_labels(task, init) -> str | None:
    """Why `init`'s head must not be reused for `task` (the labels of its
    run are not the task's), else None.

    Args:
        task: the task being fine-tuned (its `config.labels`, if any).
        init: what `--init` named.

    Example:
    >>> from albert_keras.tasks import ClassificationTask
    >>> other_labels(ClassificationTask(labels=["neg", "pos"]), "albert_tiny") is None
    True
    """
    new = getattr(task.config, "labels", None)
    old = init_labels(init)
    if not new or old is None:
        return None
    if [str(x) for x in old] == [str(x) for x in new]:
        return None
    return (
        f"backbone reused, new head: the --init run's labels {old} are not "
        f"this run's {list(new)} (its head's classes would stand for other "
        "labels)"
    )
