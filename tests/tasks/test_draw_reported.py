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


def test_a_squad_dev_draw_among_skipped_questions_is_printed(tmp_path, capsys):
    """A SQuAD dev file's draw is among all its questions (a skipped one is
    answered ""): a draw of 3 of 2 kept + 2 skipped was not reported."""
    import json

    from albert_keras.tasks import SquadTask

    qas = [
        {"id": f"q{i}", "question": "Who?" if i < 2 else "", "answers": []}
        for i in range(4)
    ]
    data = [{"paragraphs": [{"context": "Emma lived at Hartfield.", "qas": qas}]}]
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps({"version": "v2.0", "data": data}))
    options = FinetuningOptions(max_train_examples=None, max_dev_examples=3)
    splits = _read_splits(SquadTask(), str(dev), str(dev), options)
    printed = capsys.readouterr().out.splitlines()
    assert len(splits["dev"].examples) == 3
    assert printed[-1].endswith("3 drawn (--max-dev-examples)"), printed
