"""`albert-keras create-data`: text files -> official ALBERT pretraining TFRecords.

albert-keras create-data --input 'corpus/*.txt' --output data/ --max-seq-length 512

`add_parser(subparsers)` registers the command; `run(args)` runs it.
`add_data_arguments` and `data_options` are shared with `albert-keras pretrain`.
"""

from __future__ import annotations

import argparse
import dataclasses

from albert_keras.cli_help import DefaultsHelpFormatter
from albert_keras.pretraining.pretraining_data_options import PretrainingDataOptions

# The `PretrainingDataOptions` fields `data_options` leaves out: `tokenizer` (a
# Python object, no flag), and `split_sentences` and `verbose`, which each
# command sets by its own rules.
_LEFT_TO_THE_COMMAND = ("tokenizer", "split_sentences", "verbose")


def add_data_arguments(parser, **defaults) -> None:
    """The data-creation flags (the official script's, with dashes).

    Defaults are those of `PretrainingDataOptions`.

    Args:
        parser: an `argparse.ArgumentParser`.
        **defaults: other defaults, e.g. `dupe_factor=2`.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser, dupe_factor=2)
    >>> parser.parse_args(["--seed", "3"]).dupe_factor
    2
    """
    values = {
        field.name: field.default
        for field in dataclasses.fields(PretrainingDataOptions)
    }
    values.update(defaults)
    _add_text_arguments(parser)
    _add_instance_arguments(parser, values)
    _add_output_arguments(parser, values)


def _add_text_arguments(parser):
    """--input, --vocab, --lowercase."""
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
        help="lowercase the text, the official do_lower_case",
    )


def _add_instance_arguments(parser, values):
    """How instances are cut and masked: --max-seq-length to --split-sentences."""
    parser.add_argument(
        "--max-seq-length",
        type=int,
        default=values["max_seq_length"],
        help="pieces per instance"
        if values["max_seq_length"]
        else "pieces per instance (default: 128, 64 for the embedded corpus, the "
        "records' own with --records)",
    )
    parser.add_argument(
        "--max-predictions-per-seq",
        type=int,
        default=values["max_predictions_per_seq"],
        help="masked positions per instance at most"
        if values["max_predictions_per_seq"]
        else "masked positions per instance at most (default: 20, 10 for the "
        "embedded corpus, the records' own with --records)",
    )
    parser.add_argument(
        "--masked-lm-prob",
        type=float,
        default=values["masked_lm_prob"],
        help="share of pieces masked; 0 writes unmasked records for dynamic masking",
    )
    parser.add_argument(
        "--short-seq-prob",
        type=float,
        default=values["short_seq_prob"],
        help="share of documents with a shorter random target",
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
        help="longest masked span in words, p(n) ~ 1/n",
    )
    parser.add_argument(
        "--do-whole-word-mask",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="mask whole words",
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
        help="cut each line into sentences, after . ! ? and after 。！？ "
        "(for a paragraph per line; on for the embedded corpus)",
    )


def _add_output_arguments(parser, values):
    """--seed, --num-shards, --num-workers."""
    parser.add_argument(
        "--seed",
        type=int,
        default=values["seed"],
        help="same seed, same bytes",
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
        help="processes, one input file each at a time",
    )


def data_options(args) -> dict:
    """`create_pretraining_data` keyword arguments from the parsed flags.

    `vocab` and the `PretrainingDataOptions` fields but `tokenizer`,
    `split_sentences` and `verbose` (the command's to set).

    Args:
        args: parsed flags of `add_data_arguments`.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser)
    >>> data_options(parser.parse_args(["--no-lowercase"]))["lowercase"]
    False
    """
    names = [
        field.name
        for field in dataclasses.fields(PretrainingDataOptions)
        if field.name not in _LEFT_TO_THE_COMMAND
    ]
    return {"vocab": args.vocab, **{name: getattr(args, name) for name in names}}


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
        formatter_class=DefaultsHelpFormatter,
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
    # Pure Python on a SentencePiece vocabulary: TensorFlow is not started.
    parser.set_defaults(run=run, starts_tensorflow=False)
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
    from albert_keras.pretraining.shard_files import output_paths, refuse_other_shards
    from albert_keras.sample_text import CORPUS_PATH
    from albert_keras.tokenizers.vocabulary import input_paths

    inputs = input_paths(args.input or [CORPUS_PATH])
    shards = args.num_shards or len(inputs)
    refuse_other_shards(args.output, output_paths(args.output, shards))
    stats = create_pretraining_data(
        inputs,
        args.output,
        split_sentences=args.split_sentences or not args.input,
        verbose=not args.quiet,
        **data_options(args),
    )
    print(format_stats(stats))
    return 0
