"""`albert-keras vocab`: train an ALBERT vocabulary (SentencePiece or WordPiece).

    albert-keras vocab --input corpus.txt --size 30000 --output vocab/spm
    albert-keras vocab --input zh.txt --size 21128 --output vocab/zh --kind wordpiece

`albert_keras/cli.py` wires it in with `add_parser(subparsers)`; `run(args)`
does the work.
"""

from __future__ import annotations

import argparse

from albert_keras.cli_help import DefaultsHelpFormatter


def add_parser(subparsers):
    """Adds the `vocab` subcommand to an argparse `subparsers` object.

    Args:
        subparsers: what `parser.add_subparsers()` returned.

    Example:
    >>> parser = argparse.ArgumentParser(prog="albert-keras")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["vocab", "--input", "a.txt", "--output", "v/spm"])
    >>> args.kind, args.size, args.lowercase
    ('spm', 30000, True)
    """
    parser = subparsers.add_parser(
        "vocab",
        formatter_class=DefaultsHelpFormatter,
        help="train an ALBERT vocabulary (SentencePiece or WordPiece) from text",
        description=(
            "Train a SentencePiece model with the official ALBERT layout and "
            "trainer options (<pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4; writes "
            "PREFIX.model and PREFIX.vocab, or OUTPUT and its .vocab if it ends "
            "in .model), or a WordPiece vocabulary like the "
            "*_zh releases' (writes PREFIX.txt, or OUTPUT if it ends in .txt; "
            "[PAD]=0 [UNK]=100 [CLS]=101 [SEP]=102 [MASK]=103 with 99 unused "
            "slots)."
        ),
    )
    parser.add_argument(
        "--input",
        nargs="+",
        required=True,
        help="UTF-8 text files or globs (.gz too), one paragraph a line",
    )
    parser.add_argument("--output", required=True, help="output prefix")
    parser.add_argument("--size", type=int, default=30000, help="vocabulary size")
    parser.add_argument(
        "--kind",
        choices=("spm", "wordpiece"),
        default="spm",
        help="spm (English releases) or wordpiece (Chinese releases)",
    )
    parser.add_argument(
        "--lowercase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lowercase (and strip accents) as the released models",
    )
    parser.add_argument(
        "--cased",
        dest="lowercase",
        action="store_false",
        default=argparse.SUPPRESS,  # the default is --lowercase's
        help="same as --no-lowercase",
    )
    parser.add_argument(
        "--unused",
        type=int,
        default=99,
        help="wordpiece: [unusedN] slots after [PAD] (default: 99, the release's)",
    )
    # Pure Python on a SentencePiece vocabulary: TensorFlow is not started.
    parser.set_defaults(run=run, starts_tensorflow=False)


def run(args) -> int:
    """Trains the vocabulary `args` asks for and prints what was written.

    Args:
        args: parsed arguments of `add_parser`'s subcommand.

    Returns: 0. Bad input raises `ValueError` with the problem and the fix
    (the `albert-keras` command prints it and exits with status 2).
    """
    from albert_keras.tokenizers.vocabulary import (
        build_wordpiece_vocabulary,
        train_sentencepiece,
    )

    case = "lowercased" if args.lowercase else "cased"
    if args.kind == "spm":
        prefix = args.output  # v.model: the model itself, not v.model.model
        prefix = prefix[: -len(".model")] if prefix.endswith(".model") else prefix
        path = train_sentencepiece(args.input, prefix, args.size, args.lowercase)
        print(
            f"wrote {path} ({args.size} pieces, {case}; <pad>=0 <unk>=1 [CLS]=2 "
            "[SEP]=3 [MASK]=4): use it with AlbertTokenizer"
        )
    else:
        path = build_wordpiece_vocabulary(
            args.input,
            args.output if args.output.endswith(".txt") else args.output + ".txt",
            args.size,
            lowercase=args.lowercase,
            unused_tokens=args.unused,
        )
        with open(path, encoding="utf-8") as f:
            tokens = f.read().split("\n")[:-1]
        print(
            f"wrote {path} ({len(tokens)} tokens, {case}; [PAD]=0 "
            f"[UNK]={tokens.index('[UNK]')} [CLS]={tokens.index('[CLS]')}): use "
            "it with AlbertWordPieceTokenizer"
        )
    return 0
