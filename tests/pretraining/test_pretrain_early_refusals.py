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
    # Named by the flags given (it said "steps=10 ... steps_per_execution=3").
    assert "--steps 10 (steps=10) is not a multiple of --steps-per-execution 3" in (
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


def _wordpiece_vocab(tmp_path):
    words = "sentence of the letter was written by emma".split()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(specials + words + [str(i) for i in range(10)]) + "\n")
    return str(path)


def test_an_init_checkpoint_of_another_vocabulary_is_refused_before_the_data(
    tmp_path, capsys
):
    # Refused after the data was made and the settings recorded: the
    # corrected command (the checkpoint's --vocab) was then refused as "a run
    # started with other settings (vocab ...)".
    from albert_test_case import micro_config

    from albert_keras import AlbertBackbone, AlbertPretrainer

    init = str(tmp_path / "init.keras")
    AlbertPretrainer(AlbertBackbone(micro_config(8000))).save(init)
    vocab = ("--vocab", _wordpiece_vocab(tmp_path))
    code = _pretrain(tmp_path, "--steps", "2", "--init-checkpoint", init, vocab=vocab)
    assert code == 2
    assert "vocab_size=8000 but the vocabulary" in capsys.readouterr().err
    run = tmp_path / "run"
    assert not (run / "run_settings.json").exists()
    assert not ((run / "data").exists() and os.listdir(run / "data"))


def test_another_vocab_is_refused_even_with_force_resume(tmp_path, capsys):
    # --vocab was a training flag: --force-resume went on with the data the
    # first vocabulary made, and ids beyond the new one's size ended in
    # "indices[0,0] = 101 is not in [0, 42)" (on a GPU, silently wrong).
    flags = ["--steps", "1", "--max-seq-length", "16", "--batch-size", "2", "--no-jit"]
    assert _pretrain(tmp_path, *flags) == 0
    capsys.readouterr()
    vocab = ("--vocab", _wordpiece_vocab(tmp_path))
    code = _pretrain(tmp_path, *flags, "--steps", "2", "--force-resume", vocab=vocab)
    assert code == 2
    err = capsys.readouterr().err
    assert "data was made from other text or flags" in err and "vocab" in err


def test_a_refused_corpus_leaves_no_run_folder(tmp_path, capsys):
    # An empty corpus was refused after the run folder got its .lock and an
    # empty data/train/: the folder of a run that never started stayed behind.
    corpus = tmp_path / "empty.txt"
    corpus.write_text("", encoding="utf-8")
    args = ["pretrain", "--input", str(corpus), "--preset", "albert_tiny"]
    args += ["--output-dir", str(tmp_path / "run"), "--vocab", SPM_MODEL_PATH]
    assert main(args + ["--steps", "2"]) == 2
    assert "No training instance" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "run")
