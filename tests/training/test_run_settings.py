"""Run settings: a restart with other settings is refused in words a user reads."""

import pytest

from albert_keras.training.run_settings import SettingsChanged, check_run_settings


def test_an_unset_value_reads_the_default_not_none(tmp_path):
    folder = str(tmp_path)
    check_run_settings(folder, {"learning_rate": None, "seed": 1})
    with pytest.raises(SettingsChanged) as refused:
        check_run_settings(folder, {"learning_rate": 0.001, "seed": 1})
    message = str(refused.value)
    assert "learning_rate: the default then, 0.001 now" in message
    assert "None" not in message and "seed" not in message
    changes = check_run_settings(
        folder, {"learning_rate": None, "seed": 2}, force_resume=True
    )
    assert changes == ["seed: 1 then, 2 now"]


def test_a_nested_change_is_named_by_its_key(tmp_path):
    # Before: a changed --max-seq-length printed the whole task config twice
    # ("task: {'class': ..., 'config': {...}} then, {...} now").
    folder = str(tmp_path)
    task = {"class": "ClassificationTask", "config": {"sequence_length": 16}}
    check_run_settings(folder, {"task": task, "seed": 0})
    longer = {"class": "ClassificationTask", "config": {"sequence_length": 32}}
    with pytest.raises(SettingsChanged) as refused:
        check_run_settings(folder, {"task": longer, "seed": 0})
    assert "(task.config.sequence_length: 16 then, 32 now)" in str(refused.value)
    assert "ClassificationTask" not in str(refused.value)
