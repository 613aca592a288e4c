"""Flags `pretrain` refuses are refused before any data is made, as errors.

--steps that --steps-per-execution does not divide was refused only after
the vocabulary and the records were made (hours on a large corpus), and
--strategy tpu without a TPU ended in a RuntimeError traceback, later refused
only after the vocabulary and records were made.
"""

import os

import pytest

from albert_keras.cli import main
from albert_keras.sample_text import SPM_MODEL_PATH

TEXT = "\n\n".join(
    "\n".join(f"Sentence {i} of the letter {d} was written by Emma." for i in range(4))
    for d in range(4)
)


def _pretrain(tmp_path, *flags, vocab=("--vocab", SPM_MODEL_PATH)):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT + "\n", encoding="utf-8")
    args = ["pretrain", "--input", str(corpus), "--preset", "albert_tiny"]
    args += ["--output-dir", str(tmp_path / "run"), *vocab]
    return main(args + list(flags))


def test_steps_per_execution_is_refused_before_the_data(tmp_path, capsys):
    assert _pretrain(tmp_path, "--steps", "10", "--steps-per-execution", "3") == 2
    assert "steps=10 is not a multiple of steps_per_execution=3" in (
        capsys.readouterr().err
    )
    assert not os.path.exists(tmp_path / "run" / "data")


@pytest.mark.parametrize("vocab", [("--vocab", SPM_MODEL_PATH), ("--vocab-size", "30")])
def test_an_unreachable_tpu_is_an_error_naming_the_flags(tmp_path, capsys, vocab):
    code = _pretrain(tmp_path, "--steps", "2", "--strategy", "tpu", vocab=vocab)
    out, err = capsys.readouterr()
    assert code == 2, err[-2000:]
    assert "error: --strategy tpu could not reach a local TPU" in err
    assert "Traceback" not in err
    assert "SentencePiece vocabulary" not in out  # before any vocabulary training
    data = tmp_path / "run" / "data"
    assert not (data.exists() and os.listdir(data))  # and before any data
