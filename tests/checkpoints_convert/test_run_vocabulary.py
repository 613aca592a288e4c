"""A fine-tuning run's WordPiece vocabulary is found beside its best.keras.

The run copied `--vocab zh_vocab.txt` under its own name, which no lookup
of a vocabulary beside a model knows (vocab.txt, X.vocab.txt, *.model):
`albert-convert best.keras --to-hf` wrote a transformers folder without a
tokenizer ("no vocabulary beside ... none written") and `--init best.keras`
asked for --vocab. A vocabulary under another name is now kept as
`best.vocab.txt` (`best.model` for SentencePiece), as albert-convert keeps
one beside a .keras file.
"""

import os

from albert_test_case import TINY_FINETUNING
from albert_test_case import task_file as _task

from albert_keras.tasks import task_from_name
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.tokenizers import build_wordpiece_vocabulary
from albert_keras.tokenizers.vocabulary_files import vocabulary_tokens
from checkpoints_convert.backbone_loader import find_vocabulary
from checkpoints_convert.cli import main as convert_main


def test_a_wordpiece_vocabulary_of_any_name_is_found_beside_best_keras(tmp_path):
    vocab = build_wordpiece_vocabulary(
        [_task("zh_sentiment", "train.jsonl")],
        str(tmp_path / "zh_vocab.txt"),
        vocab_size=1000,
        max_characters=200_000,
    )
    out = str(tmp_path / "run")
    options = dict(TINY_FINETUNING, max_train_examples=16, max_dev_examples=8)
    run_finetuning(
        task_from_name("classify", sequence_length=16),
        _task("zh_sentiment", "train.jsonl"),
        _task("zh_sentiment", "dev.jsonl"),
        output_dir=out,
        vocab=vocab,
        **dict(options, epochs=1, export=False),
    )
    best = os.path.join(out, "best.keras")
    found = find_vocabulary(best)
    assert vocabulary_tokens(found) == vocabulary_tokens(vocab)
    hf = str(tmp_path / "hf")
    assert convert_main([best, "--to-hf", "--output", hf]) == 0
    assert "vocab.txt" in os.listdir(hf)
