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
# Small draws: each example's cost is mostly its fixed part (model, dev
# scoring, export); only "dev " printed is checked.
CASES = {
    "classify_rt_sentiment.py": ["--train-examples", "32"],
    "pair_vitaminc.py": ["--train-examples", "32", "--dev-examples", "32"],
    "regress_rt_sentiment.py": ["--train-examples", "32"],
    "classify_zh_sentiment.py": ["--train-examples", "32"],
    "choice_social_iqa.py": ["--train-examples", "16"],
    # The v2 head; 16 of the 128 dev questions.
    "squad_disfl_qa.py": ["--train-questions", "8", "--dev-questions", "16"],
    "tag_brown.py": ["--train-examples", "32"],
    "multilabel_foldoc.py": ["--train-examples", "32"],
    "embed_vitaminc.py": ["--train-examples", "32", "--dev-examples", "32"],
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
    # Fresh layer names for the next example; the garbage collector runs on
    # its own (a forced full collection costs ~0.5 s in a worker).
    keras.backend.clear_session(free_memory=False)
    printed = capsys.readouterr().out
    assert "dev " in printed, printed[-2000:]
    # The regression example printed a score rounded to zero as "-0.0".
    assert "-0.0," not in printed and "-0.0}" not in printed, printed[-2000:]
