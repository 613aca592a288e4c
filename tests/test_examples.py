"""Every script in examples/ runs on the tasks of tests/data (tiny model, one epoch)."""

import os
import runpy
import sys

import keras
import pytest
from albert_test_case import data_dir

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
# Without XLA: its compilation costs more than these tiny runs (the README
# and CLI tests fine-tune with it, the default).
SMALL = ["--init", "albert_tiny", "--epochs", "1", "--no-jit"]
CASES = {
    "classify_rt_sentiment.py": ["--train-examples", "64"],
    "pair_vitaminc.py": ["--train-examples", "64", "--dev-examples", "64"],
    "regress_rt_sentiment.py": ["--train-examples", "64"],
    "classify_zh_sentiment.py": ["--train-examples", "64"],
    "choice_social_iqa.py": ["--train-examples", "32"],
    # The v2 head; 32 of the 128 dev questions.
    "squad_disfl_qa.py": ["--train-questions", "16", "--dev-questions", "32"],
}


def test_every_example_is_tested():
    scripts = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    assert scripts == sorted(CASES)


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = [script, "--data", data_dir(), *SMALL, *CASES[script]]
    if "--output" in open(os.path.join(EXAMPLES, script)).read():
        argv += ["--output", str(tmp_path / "out")]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(os.path.join(EXAMPLES, script), run_name="__main__")
    keras.backend.clear_session()
    printed = capsys.readouterr().out
    assert "dev " in printed, printed[-2000:]
