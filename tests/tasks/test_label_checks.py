"""The label set: declared or inferred, and what looks like a typo refused."""

import pytest

from albert_keras.cli import build_parser
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetune_cli import _task


def _records(labels):
    return [{"text": f"review {i}", "label": label} for i, label in enumerate(labels)]


def test_mixed_number_and_string_labels_are_refused_with_their_lines():
    records = _records([0, 1, "1", 0, 1])
    with pytest.raises(ValueError, match=r"strings on line\(s\) 3; numbers on"):
        ClassificationTask().read(records, training=True)


def test_a_stray_rare_label_is_refused_with_its_line():
    labels = [0, 1] * 300
    labels[417] = 7
    with pytest.raises(ValueError, match=r"7 on line\(s\) 418\. A typo\?"):
        ClassificationTask().read(_records(labels), training=True)


def test_a_declared_label_set_skips_and_reports_other_labels():
    labels = [0, 1] * 300
    labels[417] = 7
    data = ClassificationTask(labels=[0, 1]).read(_records(labels), training=True)
    assert data.num_rows == 599
    assert "label outside the label set: 1, line 418" in data.report.summary()
    # Declared, a rare class is a class.
    task = ClassificationTask(labels=[0, 1, 7])
    assert task.read(_records(labels), training=True).num_rows == 600


def test_small_files_may_have_small_classes():
    data = ClassificationTask().read(_records([0, 1, 1, 2]), training=True)
    assert data.num_rows == 4


def test_the_cli_reads_labels_as_numbers_or_strings():
    parser = build_parser()
    base = ["finetune", "--task", "classify", "--train", "t", "--dev", "d"]
    args = parser.parse_args([*base, "--labels", "0, 1"])
    assert _task(args).config.labels == [0, 1]
    args = parser.parse_args([*base, "--labels", "neg,pos"])
    assert _task(args).config.labels == ["neg", "pos"]
