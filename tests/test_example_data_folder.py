"""An example run without its data folder says which --data to pass.

The default --data (`$ALBERT_KERAS_DATA`, else `../shared/data`) is relative
to where the script runs; run from elsewhere, each script ended in a
FileNotFoundError traceback of the task reader.
"""

import os
import runpy
import sys

import pytest
from test_examples import CASES, EXAMPLES


@pytest.mark.parametrize("script", sorted(CASES))
def test_a_missing_data_folder_is_refused_naming_the_flag(
    script, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ALBERT_KERAS_DATA", raising=False)
    monkeypatch.setattr(sys, "argv", [script, "--init", "albert_tiny"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(os.path.join(EXAMPLES, script), run_name="__main__")
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "does not exist: pass --data" in err and "tests/data" in err
