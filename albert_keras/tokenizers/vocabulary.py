"""`train_sentencepiece`: an ALBERT-style SentencePiece vocabulary from text."""

from __future__ import annotations

import os

from albert_keras.pretraining.sentencepiece_text import preprocess_text

# The options of the released 30k-clean.model: ids 0-4 are <pad>, <unk>,
# [CLS], [SEP], [MASK]; no BOS/EOS; unigram model.
OFFICIAL_OPTIONS = dict(
    pad_id=0,
    unk_id=1,
    bos_id=-1,
    eos_id=-1,
    control_symbols=["[CLS]", "[SEP]", "[MASK]"],
    user_defined_symbols=["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"],
    model_type="unigram",
    character_coverage=0.99995,
    shuffle_input_sentence=True,
    input_sentence_size=10_000_000,
)


def train_sentencepiece(
    input_files, output_prefix: str, vocab_size: int = 30000, lowercase: bool = True
) -> str:
    """Trains `output_prefix.model` (+ `.vocab`) with the official layout.

    Lines are preprocessed as the tokenizer will see them (`preprocess_text`),
    so the vocabulary matches what `AlbertTokenizer` feeds SentencePiece.

    Args:
        input_files: text files.
        output_prefix: where the model goes (folders are created).
        vocab_size: pieces, special tokens included.
        lowercase: lowercase the text (as the released English models).

    Returns: the `.model` path.

    Example:
    >>> train_sentencepiece(["corpus.txt"], "vocab/spm", 8000)  # doctest: +SKIP
    """
    import sentencepiece as spm

    lines = []
    for path in input_files:
        try:
            with open(path, encoding="utf-8") as f:
                lines.extend(
                    preprocess_text(line, lowercase) for line in f if line.strip()
                )
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"Cannot read {path!r} as UTF-8 text: {e}") from None
    if not lines:
        raise ValueError(f"No text in {list(input_files)}: the corpus is empty.")
    folder = os.path.dirname(os.path.abspath(output_prefix))
    os.makedirs(folder, exist_ok=True)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=output_prefix,
            vocab_size=vocab_size,
            minloglevel=2,
            **OFFICIAL_OPTIONS,
        )
    except RuntimeError as e:
        raise ValueError(f"SentencePiece could not train: {e}") from None
    return output_prefix + ".model"


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "vocab", help="train an ALBERT SentencePiece vocabulary from text"
    )
    parser.add_argument("--input", nargs="+", required=True, help="text files")
    parser.add_argument("--output", required=True, help="output prefix")
    parser.add_argument("--size", type=int, default=30000, help="vocabulary size")
    parser.add_argument("--cased", action="store_true", help="keep case")
    parser.set_defaults(run=run)


def run(args):
    path = train_sentencepiece(args.input, args.output, args.size, not args.cased)
    print(
        f"wrote {path} ({args.size} pieces; <pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4)"
    )
    return 0
