"""`albert-keras create-data`: text files -> official ALBERT pretraining TFRecords.

albert-keras create-data --input 'corpus/*.txt' --output data/ --max-seq-length 512

`add_parser(subparsers)` registers the command; `run(args)` runs it.
`add_data_arguments` and `data_options` are shared with `albert-keras pretrain`.
"""

from __future__ import annotations

import argparse


def add_data_arguments(parser, **defaults) -> None:
    """The data-creation flags (the official script's, with dashes).

    Args:
        parser: an `argparse.ArgumentParser`.
        **defaults: other defaults, e.g. `dupe_factor=2`.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser, dupe_factor=2)
    >>> parser.parse_args(["--seed", "3"]).dupe_factor
    2
    """
    values = dict(
        max_seq_length=512,
        max_predictions_per_seq=20,
        masked_lm_prob=0.15,
        short_seq_prob=0.1,
        dupe_factor=1,
        ngram=3,
        seed=12345,
        num_workers=1,
    )
    values.update(defaults)
    parser.add_argument(
        "--input",
        nargs="+",
        metavar="FILE_OR_GLOB",
        help="UTF-8 text files (.gz too): a segment per line, a blank line "
        "between documents; default: the embedded Austen corpus",
    )
    parser.add_argument(
        "--vocab",
        help="SentencePiece .model or WordPiece vocab.txt (default: the embedded "
        "austen-8k.model)",
    )
    parser.add_argument(
        "--lowercase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lowercase the text, the official do_lower_case (default: on)",
    )
    parser.add_argument(
        "--max-seq-length",
        type=int,
        default=values["max_seq_length"],
        help="pieces per instance (default: %(default)s)"
        if values["max_seq_length"]
        else "pieces per instance (default: 128, or 64 for the embedded corpus)",
    )
    parser.add_argument(
        "--max-predictions-per-seq",
        type=int,
        default=values["max_predictions_per_seq"],
        help="masked positions per instance at most (default: %(default)s)"
        if values["max_predictions_per_seq"]
        else "masked positions per instance at most (default: 20, or 10 for the "
        "embedded corpus)",
    )
    parser.add_argument(
        "--masked-lm-prob",
        type=float,
        default=values["masked_lm_prob"],
        help="share of pieces masked; 0 writes unmasked records for dynamic "
        "masking (default: %(default)s)",
    )
    parser.add_argument(
        "--short-seq-prob",
        type=float,
        default=values["short_seq_prob"],
        help="share of documents with a shorter random target (default: %(default)s)",
    )
    parser.add_argument(
        "--dupe-factor",
        type=int,
        default=values["dupe_factor"],
        help="passes over the data with new pairs and masks (default: "
        "%(default)s; the official script's is 40)",
    )
    parser.add_argument(
        "--ngram",
        type=int,
        default=values["ngram"],
        help="longest masked span in words, p(n) ~ 1/n (default: %(default)s)",
    )
    parser.add_argument(
        "--do-whole-word-mask",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="mask whole words (default: on)",
    )
    parser.add_argument(
        "--random-next-sentence",
        action="store_true",
        help="NSP pairs (B from another document half the time) instead of "
        "sentence order, for the paper's Table 5 comparison",
    )
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="cut each line into sentences (for a paragraph per line; on for "
        "the embedded corpus)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=values["seed"],
        help="same seed, same bytes (default: %(default)s)",
    )
    parser.add_argument(
        "--num-shards",
        type=int,
        help="output files (default: one per input file)",
    )
    parser.add_argument(
        "--num-workers",
        type=int,
        default=values["num_workers"],
        help="processes, one input file each at a time (default: %(default)s)",
    )


def data_options(args) -> dict:
    """`create_pretraining_data` keyword arguments from the parsed flags.

    Args:
        args: parsed flags of `add_data_arguments`.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser)
    >>> data_options(parser.parse_args(["--no-lowercase"]))["lowercase"]
    False
    """
    return dict(
        vocab=args.vocab,
        lowercase=args.lowercase,
        max_seq_length=args.max_seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        masked_lm_prob=args.masked_lm_prob,
        short_seq_prob=args.short_seq_prob,
        dupe_factor=args.dupe_factor,
        ngram=args.ngram,
        do_whole_word_mask=args.do_whole_word_mask,
        random_next_sentence=args.random_next_sentence,
        seed=args.seed,
        num_shards=args.num_shards,
        num_workers=args.num_workers,
    )


def add_parser(subparsers):
    """Registers `create-data` (once) on an `argparse` subparsers object.

    Args:
        subparsers: what `ArgumentParser.add_subparsers()` returned.

    Returns: the `create-data` parser; `args.run(args)` runs the command.

    Example:
    >>> top = argparse.ArgumentParser(prog="albert-keras")
    >>> sub = top.add_subparsers(dest="command")
    >>> _ = add_parser(sub)
    >>> top.parse_args(["create-data", "--output", "data/"]).max_seq_length
    512
    """
    if "create-data" in subparsers.choices:
        return subparsers.choices["create-data"]
    parser = subparsers.add_parser(
        "create-data",
        help="text -> official pretraining TFRecords (SOP + n-gram masking)",
        description=(
            "Documents (a segment per line, a blank line between documents) -> "
            "sharded TFRecords with the official ALBERT features: sentence-order "
            "pairs, whole-word n-gram masking (n <= 3, p(n) ~ 1/n), seeded."
        ),
    )
    add_data_arguments(parser)
    parser.add_argument(
        "--output",
        required=True,
        help="a folder (existing or ending in /) for part-*.tfrecord shards, or "
        "a prefix for PREFIX-00000-of-0000N.tfrecord",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.set_defaults(run=run)
    return parser


def run(args) -> int:
    """Runs `create-data` with parsed arguments; prints the statistics.

    Args:
        args: the parsed `create-data` flags.

    Returns: 0 (errors raise `ValueError`, which `albert-keras` prints).

    Example:
    >>> run(parser.parse_args(["create-data", "--output", "d/"]))  # doctest: +SKIP
    """
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_data,
        format_stats,
    )
    from albert_keras.sample_text import CORPUS_PATH

    stats = create_pretraining_data(
        args.input or [CORPUS_PATH],
        args.output,
        split_sentences=args.split_sentences or not args.input,
        verbose=not args.quiet,
        **data_options(args),
    )
    print(format_stats(stats))
    return 0
