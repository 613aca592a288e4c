"""A run with `--max-train-examples` says how many examples it draws.

It printed "train: train.jsonl: 200 kept" and trained on 64 of them.
"""

from albert_test_case import task_file

from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_options import FinetuningOptions
from albert_keras.tasks.finetuning_run import _read_splits


def test_the_draw_is_printed_beside_the_file_count(capsys):
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    options = FinetuningOptions(max_train_examples=16, max_dev_examples=None)
    splits = _read_splits(
        task,
        task_file("rt_sentiment", "train.jsonl"),
        task_file("rt_sentiment", "dev.jsonl"),
        options,
    )
    printed = capsys.readouterr().out.splitlines()
    kept = splits["train"].report.kept
    assert len(splits["train"].examples) == 16 < kept
    assert printed[0].endswith(f"{kept} kept; 16 drawn (--max-train-examples)")
    assert printed[1].endswith(f"{splits['dev'].report.kept} kept")
