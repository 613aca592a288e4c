"""`task.read(dev)` before the training file: the fix, not "label set None".

fine-tuning.md's plain `model.fit` recipe reads train (training=True), then
dev; a user reading dev alone got every record skipped as "outside the label
set None".
"""

import pytest
from albert_test_case import task_file

from albert_keras.tasks import ClassificationTask


def test_dev_read_first_names_the_missing_label_set():
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    with pytest.raises(ValueError, match="no label set yet") as raised:
        task.read(task_file("rt_sentiment", "dev.jsonl"))
    assert "None" not in str(raised.value)
    assert "training=True" in str(raised.value)


def test_dev_after_training_file_or_with_labels_reads():
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    task.read(task_file("rt_sentiment", "train.jsonl"), training=True)
    assert task.read(task_file("rt_sentiment", "dev.jsonl")).examples
    given = ClassificationTask(labels=[0, 1], text_fields=("text",))
    assert given.read(task_file("rt_sentiment", "dev.jsonl")).examples
