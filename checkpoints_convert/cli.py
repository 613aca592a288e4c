"""`albert-convert`: official TF1 checkpoints <-> `.keras` files.

albert-convert SRC --output model.keras [--model pretrainer] [--saved-model DIR]
albert-convert --to-official model.keras --output DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="albert-convert",
        description=(
            "Convert a google-research ALBERT checkpoint (release folder, prefix "
            "or TF1 Hub module) to a .keras file, or a .keras file back to the "
            "official TF1 format."
        ),
    )
    parser.add_argument("source", help="checkpoint folder/prefix, or a .keras file")
    parser.add_argument("--output", required=True, help=".keras file, or a folder")
    parser.add_argument(
        "--model",
        default="pretrainer",
        choices=["backbone", "pretrainer", "classifier", "span_qa", "multiple_choice"],
        help="which model to build (default: pretrainer, heads included)",
    )
    parser.add_argument("--config", help="albert_config.json (default: the release's)")
    parser.add_argument("--num-classes", type=int, help="for a new classifier head")
    parser.add_argument("--saved-model", help="also export a SavedModel here")
    parser.add_argument(
        "--text-model",
        type=int,
        metavar="SEQUENCE_LENGTH",
        help="wrap a task model with the release's tokenizer (30k-clean.model or "
        "vocab_chinese.txt) so it takes raw strings; the SavedModel then serves text",
    )
    parser.add_argument(
        "--to-official",
        action="store_true",
        help="convert a .keras file to an official TF1 checkpoint in --output",
    )
    return parser


def _to_keras(args):
    from checkpoints_convert.converter import load_official_checkpoint

    kwargs = {"num_classes": args.num_classes} if args.num_classes else {}
    model = load_official_checkpoint(
        args.source, model=args.model, config=args.config, **kwargs
    )
    report = model.conversion_report
    print(
        f"loaded {report['loaded']} variables from {report['checkpoint']}; "
        f"skipped heads: {len(report['skipped_heads'])}; ignored optimizer "
        f"variables: {len(report['ignored'])}",
        file=sys.stderr,
    )
    if not args.output.endswith(".keras"):
        raise ValueError(f"--output must end with .keras. Received: {args.output!r}")
    if args.text_model:
        model = _with_tokenizer(model, report["vocab"], args)
    model.save(args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    if args.saved_model:
        if args.text_model:
            model.export_serving(args.saved_model)
        else:
            model.export(args.saved_model, verbose=False)
        print(f"wrote SavedModel {args.saved_model}", file=sys.stderr)


def _with_tokenizer(model, vocab, args):
    from albert_keras.tokenizers import (
        AlbertTextModel,
        AlbertTokenizer,
        AlbertWordPieceTokenizer,
    )

    if args.model in ("backbone", "pretrainer", "multiple_choice"):
        raise ValueError(
            "--text-model wraps a classifier or span_qa model (inputs are packed "
            f"texts). Received: --model {args.model}"
        )
    if vocab is None:
        raise ValueError(
            "--text-model needs the release's vocabulary (30k-clean.model or "
            "vocab_chinese.txt) beside the checkpoint or in assets/."
        )
    if vocab.endswith(".model"):
        tokenizer = AlbertTokenizer(vocab)
    else:
        tokenizer = AlbertWordPieceTokenizer(vocab)
    print(f"tokenizer: {vocab}", file=sys.stderr)
    return AlbertTextModel(model, tokenizer, args.text_model)


def _to_official(args):
    import keras

    from checkpoints_convert.converter import save_official_checkpoint

    if not os.path.isfile(args.source):
        raise FileNotFoundError(f"No .keras file at {args.source!r}")
    model = keras.saving.load_model(args.source)
    prefix = save_official_checkpoint(
        model, os.path.join(args.output, "model.ckpt-best")
    )
    print(
        f"wrote {prefix}.index/.data-00000-of-00001 and albert_config.json",
        file=sys.stderr,
    )


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        (_to_official if args.to_official else _to_keras)(args)
    except (ValueError, FileNotFoundError, json.JSONDecodeError) as e:
        print(f"albert-convert: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
