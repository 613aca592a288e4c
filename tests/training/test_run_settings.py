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
