"""Fine-tuning tasks, one class each (see README.md here).

The names load on first use (`from albert_keras.tasks import
ClassificationTask`), so `albert-keras` parses its arguments without loading
Keras and TensorFlow.

>>> from albert_keras.tasks import ClassificationTask
>>> task = ClassificationTask(num_classes=2, text_fields=("text",))
>>> task.config.sequence_length
128
"""

from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes

_MULTI_LABEL = "albert_keras.tasks.multi_label_classification_task"
_LAZY = {
    "ClassificationConfig": "albert_keras.tasks.classification_task",
    "ClassificationTask": "albert_keras.tasks.classification_task",
    "FinetuningOptions": "albert_keras.tasks.finetuning_options",
    "MultiLabelClassificationConfig": _MULTI_LABEL,
    "MultiLabelClassificationTask": _MULTI_LABEL,
    "MultipleChoiceConfig": "albert_keras.tasks.multiple_choice_task",
    "MultipleChoiceTask": "albert_keras.tasks.multiple_choice_task",
    "SentenceEmbeddingConfig": "albert_keras.tasks.sentence_embedding_task",
    "SentenceEmbeddingTask": "albert_keras.tasks.sentence_embedding_task",
    "SquadConfig": "albert_keras.tasks.squad_task",
    "SquadTask": "albert_keras.tasks.squad_task",
    "TASK_CLASSES": "albert_keras.tasks.task_names",
    "TASK_NAMES": "albert_keras.tasks.task_names",
    "Task": "albert_keras.tasks.task",
    "TokenClassificationConfig": "albert_keras.tasks.token_classification_task",
    "TokenClassificationTask": "albert_keras.tasks.token_classification_task",
    "run_finetuning": "albert_keras.tasks.finetuning_run",
    "run_prediction": "albert_keras.tasks.prediction_run",
    "task_from_name": "albert_keras.tasks.task_names",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
