"""`albert-convert`: official TF1 checkpoints <-> `.keras` files.

    albert-convert SRC --output model.keras [--model pretrainer] [--config CFG]
                   [--num-classes N] [--saved-model DIR] [--text-model LENGTH]
                   [--null-threshold T] [--vocab V]
    albert-convert --to-official model.keras --output DIR
    albert-convert --to-hf model.keras --output DIR [--vocab spiece.model|vocab.txt]
    albert-convert --to-keras-hub SRC --output DIR [--vocab spiece.model]

SRC may also be an official release `.tar.gz`, a Hugging Face transformers
ALBERT folder (`config.json` + `model.safetensors`), a keras-hub preset
folder, a `.keras` file or a released preset's name ("albert_base_v2": its
weights in the cache, as `from_preset` finds them); `--to-hf` writes a
transformers folder, `--to-keras-hub` a keras-hub preset folder (from any
SRC, `.keras` included).

Progress and the conversion summary go to stderr. User errors (a missing or
foreign checkpoint, a config that does not fit) print one message and exit
with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from checkpoints_convert import conversions
from checkpoints_convert.conversions import log
from checkpoints_convert.text_model_option import (
    check_text_model,
    refuse_ignored_flags,
)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

MODEL_NAMES = [
    "backbone",
    "pretrainer",
    "classifier",
    "span_qa",
    "squad_v2",
    "multiple_choice",
    "token_classifier",
]
# The models --text-model can wrap (their inputs are texts).


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="albert-convert",
        description=(
            "Convert a google-research ALBERT TF1 checkpoint (release folder, "
            "prefix or TF1 Hub module folder) or a Hugging Face transformers "
            "ALBERT folder to a .keras file, or a .keras file back to the "
            "official TF1 format (--to-official) or to transformers (--to-hf)."
        ),
    )
    from albert_keras import __version__

    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    parser.add_argument(
        "source",
        help="checkpoint folder, prefix or .tar.gz, transformers or keras-hub "
        "folder, a .keras file, or a released preset's name (its cached weights)",
    )
    parser.add_argument(
        "--output",
        required=True,
        help="the .keras file to write, or with --to-official the folder",
    )
    parser.add_argument(
        "--model",
        choices=MODEL_NAMES,
        help="which model to build (default: pretrainer, MLM and SOP heads included)",
    )
    parser.add_argument(
        "--config", help="albert_config.json (default: the one of the release)"
    )
    parser.add_argument(
        "--num-classes",
        type=int,
        help="classifier labels (default: the checkpoint's head; needed for a new "
        "head on a pretraining release)",
    )
    parser.add_argument(
        "--saved-model", metavar="DIR", help="also export a SavedModel (model.export)"
    )
    parser.add_argument(
        "--text-model",
        type=int,
        metavar="SEQUENCE_LENGTH",
        help="wrap a classifier, multiple_choice, span_qa or squad_v2 model with "
        "the release's tokenizer (30k-clean.model or vocab_chinese.txt) so it "
        "takes raw strings (QA models: questions and contexts in, answers out, "
        "windows of this length); the SavedModel then serves text",
    )
    parser.add_argument(
        "--null-threshold",
        type=float,
        help='QA text models: answer "" where the no-answer odds exceed this '
        "(the best_f1_thresh of the official SQuAD 2.0 evaluation on dev)",
    )
    parser.add_argument(
        "--to-official",
        action="store_true",
        help="convert the .keras file SOURCE to an official TF1 checkpoint "
        "(OUTPUT/model.ckpt-best.* and albert_config.json)",
    )
    parser.add_argument(
        "--to-hf",
        action="store_true",
        help="convert the .keras file SOURCE to a transformers ALBERT folder "
        "(OUTPUT/model.safetensors and config.json, for from_pretrained)",
    )
    parser.add_argument(
        "--to-keras-hub",
        action="store_true",
        help="convert SOURCE (any kind, .keras included) to a keras-hub preset "
        "folder (OUTPUT/config.json, model.weights.h5 and the tokenizer, for "
        "keras_hub.models.AlbertBackbone.from_preset)",
    )
    parser.add_argument(
        "--vocab",
        help="the vocabulary (default: the one beside SOURCE or in the "
        "release): to a .keras file, the tokenizer of --text-model, also kept "
        "beside OUTPUT as OUTPUT's name .model or .vocab.txt; with --to-hf a "
        "SentencePiece model (spiece.model) or WordPiece vocab.txt (with a "
        "BertTokenizer config), with --to-keras-hub a SentencePiece model; with "
        "--to-official the file copied beside the checkpoint",
    )
    return parser


def _source(source):
    """A bare release name ("albert_base_v2", "base") stands for its weights
    in the cache; not there: `from_preset`'s message, with the release's URL
    and the command that fills the cache."""
    from checkpoints_convert.preset_sources import resolve_preset

    return resolve_preset(source, random_hint=_NOT_A_RELEASE)


_NOT_A_RELEASE = (
    "albert-convert also takes a path: a release folder or .tar.gz, a checkpoint "
    "prefix, a TF1 Hub module, a transformers or keras-hub folder, a .keras file."
)


def main(argv=None) -> int:
    """Runs `albert-convert`; returns the exit status (2 for user errors)."""
    args = build_parser().parse_args(argv)
    from albert_keras.quiet_start import plain_warnings, start_tensorflow_quietly
    from checkpoints_convert.conversion_error import ConversionError

    start_tensorflow_quietly()
    try:
        with plain_warnings("albert-convert"):
            # The summary's "newly initialized: mlm, sop" line says it.
            warnings.filterwarnings("ignore", "The checkpoint has no .* head")
            _convert(args)
    except (ConversionError, OSError, ValueError) as e:
        log(f"albert-convert: error: {e}")
        return 2
    return 0


def _convert(args):
    """Checks the flags together, then runs the conversion they ask for."""
    from checkpoints_convert.conversion_error import ConversionError

    targets = [f for f in ("to_official", "to_hf", "to_keras_hub") if vars(args)[f]]
    if len(targets) > 1:
        raise ConversionError(
            " and ".join("--" + t.replace("_", "-") for t in targets)
            + " exclude each other."
        )
    if args.vocab is not None and not os.path.isfile(args.vocab):
        raise ConversionError(
            f"--vocab {args.vocab!r} does not exist: pass the model's "
            "SentencePiece model (e.g. 30k-clean.model) or vocab.txt, or leave "
            "--vocab out to take the one beside the model"
        )
    if targets:
        refuse_ignored_flags(args, "--" + targets[0].replace("_", "-"))
    args.model = args.model or "pretrainer"
    if args.null_threshold is None:
        args.null_threshold = 0.0
    if not targets:
        check_text_model(args)
    args.source = _source(args.source)
    if args.to_keras_hub:
        conversions.to_keras_hub(args)
    elif args.to_official:
        conversions.to_official(args)
    elif args.to_hf:
        conversions.to_hf(args)
    else:
        conversions.to_keras(args)


if __name__ == "__main__":
    sys.exit(main())
