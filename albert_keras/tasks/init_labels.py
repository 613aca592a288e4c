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


# The model of `albert-convert --model` that keeps each task head.
_TASK_MODELS = {
    "AlbertTextClassifier": "classifier",
    "AlbertForSequenceClassification": "classifier",
    "AlbertForMultipleChoice": "multiple_choice",
    "AlbertForQuestionAnswering": "span_qa",
}
_BACKBONE_ONLY = ("AlbertModel", "AlbertForPreTraining", "AlbertForMaskedLM")


def head_left_out(init) -> str | None:
    """What a run says of the task head of a keras-hub task preset or a
    transformers task folder given as `init`, which it does not reuse (the
    folder names no labels to check its classes against), else None.

    Args:
        init: what `--init` named.

    Example:
    >>> head_left_out("albert_tiny") is None
    True
    """
    import os

    from albert_keras.atomic_files import read_json
    from checkpoints_convert.hf_checkpoint_reader import is_hf_folder
    from checkpoints_convert.keras_hub_preset_reader import is_keras_hub_preset

    if not isinstance(init, (str, os.PathLike)) or not os.path.isdir(init):
        return None
    folder = os.fspath(init)
    if is_keras_hub_preset(folder):
        task = read_json(os.path.join(folder, "task.json"))
        head = task.get("class_name") if isinstance(task, dict) else None
        kind = "keras-hub"
    elif is_hf_folder(folder):
        config = read_json(os.path.join(folder, "config.json"))
        names = config.get("architectures") if isinstance(config, dict) else None
        heads = [n for n in names or [] if n not in _BACKBONE_ONLY]
        head, kind = (heads[0] if heads else None), "transformers"
    else:
        return None
    if not isinstance(head, str):
        return None
    told = (
        f"backbone reused, new head: its {kind} {head} head is not reused (the "
        "folder names no labels to check its classes against)"
    )
    if head in _TASK_MODELS:
        told += (
            f"; to start from it: albert-convert {folder} --model "
            f"{_TASK_MODELS[head]} --output init.keras, then --init init.keras"
        )
    return told
