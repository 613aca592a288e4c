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


def _pos_neg(size, typo_at=None, typo="postive"):
    labels = ["pos" if i % 7 < 4 else "neg" for i in range(size)]
    if typo_at is not None:
        labels[typo_at] = typo
    return _records(labels)


def test_a_rare_near_miss_label_is_refused_in_a_small_file():
    # 300 rows (no class reaches COMMON_CLASS): `postive` is one typo, not a class.
    records = _pos_neg(300, typo_at=41)
    with pytest.raises(ValueError) as error:
        ClassificationTask().read(records, training=True)
    message = str(error.value)
    assert "'postive' (1 time, line 42) looks like a typo of 'pos' (172 times, " in (
        message
    )
    assert "lines 1, 2, 3, 4, 8, ..." in message
    assert "--labels neg,pos (labels=['neg', 'pos'] in Python)" in message
    # Declared, the set skips the odd row and reports it.
    data = ClassificationTask(labels=["neg", "pos"]).read(records, training=True)
    assert data.num_rows == 299
    assert "label outside the label set: 1, line 42" in data.report.summary()


@pytest.mark.parametrize("typo", ["Pos", "pos ", "POS", "positive", "neg_", "nge"])
def test_case_space_and_spelling_variants_are_near_misses(typo):
    with pytest.raises(ValueError, match=f"{typo!r} .* looks like a typo of"):
        ClassificationTask().read(_pos_neg(40, typo_at=5, typo=typo), training=True)


def test_rare_classes_with_other_names_are_kept():
    # One rare digit among 0..9: ten classes.
    digits = [i % 9 for i in range(200)] + [9]
    task = ClassificationTask()
    assert task.read(_records(digits), training=True).num_rows == 201
    assert task.config.num_classes == 10
    # NLI with a rare third class; string digits are names, not words.
    nli = ["entailment", "neutral"] * 100 + ["contradiction"]
    assert ClassificationTask().read(_records(nli), training=True).num_rows == 201
    strings = ["1", "2"] * 50 + ["12"]
    assert ClassificationTask().read(_records(strings), training=True).num_rows == 101
    # As common as the other (not rare), or the other not much more common.
    even = ["pos", "neg", "postive", "neg"] * 5
    assert ClassificationTask().read(_records(even), training=True).num_rows == 20
    few = ["pos", "neg"] * 2 + ["postive"]
    assert ClassificationTask().read(_records(few), training=True).num_rows == 5


def test_one_label_names_the_cli_and_python_fixes():
    with pytest.raises(ValueError) as error:
        ClassificationTask().read(_records(["pos"] * 8), training=True)
    message = str(error.value)
    assert "1 distinct label(s) ['pos']: classification needs 2 or more" in message
    assert "--labels neg,pos" in message and "labels=[...] in Python" in message
    assert "--task regress (num_classes=1 in Python)" in message
