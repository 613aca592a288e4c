"""The task classes by name, and the `--task` names of `albert-keras finetune`."""

from __future__ import annotations

from albert_keras.tasks.classification_task import ClassificationTask
from albert_keras.tasks.multi_label_classification_task import (
    MultiLabelClassificationTask,
)
from albert_keras.tasks.multiple_choice_task import MultipleChoiceTask
from albert_keras.tasks.sentence_embedding_task import SentenceEmbeddingTask
from albert_keras.tasks.squad_task import SquadTask
from albert_keras.tasks.task import Task
from albert_keras.tasks.token_classification_task import TokenClassificationTask

_CLASSES = (
    ClassificationTask,
    MultiLabelClassificationTask,
    MultipleChoiceTask,
    SentenceEmbeddingTask,
    SquadTask,
    TokenClassificationTask,
)
TASK_CLASSES = {cls.__name__: cls for cls in _CLASSES}

# The task names of `albert-keras finetune --task`: a class and its settings.
TASK_NAMES = {
    "classify": (ClassificationTask, {"pairs": False}),
    "pair": (ClassificationTask, {"pairs": True}),
    "regress": (ClassificationTask, {"num_classes": 1, "pairs": None}),
    "multilabel": (MultiLabelClassificationTask, {}),
    "choice": (MultipleChoiceTask, {}),
    "squad": (SquadTask, {}),
    "tag": (TokenClassificationTask, {}),
    "embed": (SentenceEmbeddingTask, {}),
}


def task_from_name(name: str, **fields) -> Task:
    """The task `albert-keras finetune --task NAME` trains, with config `fields`.

    Example:
    >>> task_from_name("regress").regression
    True
    """
    if name not in TASK_NAMES:
        raise ValueError(f"Unknown task {name!r}. Allowed: {', '.join(TASK_NAMES)}")
    cls, preset = TASK_NAMES[name]
    return cls(**{**preset, **fields})
