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
import json
import os
import sys
import time

from checkpoints_convert.hf_labels import keep_labels_beside
from checkpoints_convert.text_model_option import (
    check_text_model,
    refuse_ignored_flags,
    with_tokenizer_of,
)
from checkpoints_convert.written_files import file_states, written_since

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

MODEL_NAMES = [
    "backbone",
    "pretrainer",
    "classifier",
    "span_qa",
    "squad_v2",
    "multiple_choice",
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


def _log(message):
    print(message, file=sys.stderr, flush=True)


def _to_keras(args):
    from albert_keras.atomic_files import make_folder
    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.loader import load_official_checkpoint
    from checkpoints_convert.preset_sources import readable_folder

    if not args.output.endswith(".keras"):
        raise ConversionError(
            f"--output must be a .keras file. Received: {args.output!r}"
        )
    kwargs = {"num_classes": args.num_classes} if args.num_classes is not None else {}
    start = time.perf_counter()
    _log(f"reading {args.source} as {args.model}")
    with readable_folder(args.source) as source:
        model = load_official_checkpoint(
            source, model=args.model, config=args.config, **kwargs
        )
        report = model.conversion_report
        _log(report.summary())
        vocab = args.vocab or report.vocab_path
        if args.text_model is not None:
            model = with_tokenizer_of(model, vocab, args)
        make_folder(os.path.dirname(os.path.abspath(args.output)), args.output)
        model.save(args.output)
        _log(f"wrote {args.output} ({time.perf_counter() - start:.1f}s)")
        kept = _keep_vocabulary_beside(vocab, args.output) if vocab else None
        told = keep_labels_beside(source, model, args.output, kept)
        if told:  # a transformers classifier's id2label, as a run keeps labels
            _log(told)
    if args.saved_model:
        if args.text_model is not None:
            model.export_serving(args.saved_model)
        else:
            model.export(args.saved_model, verbose=False)
        _log(f"wrote SavedModel {args.saved_model}")


def _keep_vocabulary_beside(vocab, output):
    """`X.keras` gets its vocabulary as `X.model` (SentencePiece) or
    `X.vocab.txt` (WordPiece): what `--init X.keras` and a bare preset name
    of the cache find. Returns that path."""
    from albert_keras.atomic_files import copy_file
    from albert_keras.tokenizers.vocabulary_files import vocabulary_path_beside

    target = vocabulary_path_beside(output, vocab)
    copy_file(vocab, target)
    _log(f"wrote {target} (the vocabulary)")
    return target


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


def _load_keras(args, flag):
    import keras

    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.keras_file_loader import check_keras_file

    check_keras_file(args.source)
    if os.path.isfile(args.output):
        raise ConversionError(
            f"--output must be a folder with {flag}. Received the file {args.output!r}"
        )
    _log(f"reading {args.source}")
    try:
        model = keras.saving.load_model(args.source)
    except (ValueError, OSError) as e:
        raise ConversionError(
            f"Cannot load {args.source!r} as a .keras model: {e}"
        ) from None
    return model


def _to_hf(args):
    import tempfile

    from albert_keras.tokenizers.tokenizer_base import AlbertTokenizerBase
    from checkpoints_convert.hf_writer import HF_TOKENIZER_CONFIG, save_hf_checkpoint

    model = _load_keras(args, "--to-hf")
    tokenizer = getattr(model, "tokenizer", None)
    lowercase = None
    with tempfile.TemporaryDirectory() as folder:
        vocab = args.vocab
        if isinstance(tokenizer, AlbertTokenizerBase):
            lowercase = tokenizer.lowercase  # how the text model tokenizes
            if vocab is None:  # a text model (--text-model) carries its vocabulary
                tokenizer.save_assets(folder)
                vocab = os.path.join(folder, os.listdir(folder)[0])
        vocab = vocab or _vocabulary_beside(args.source)
        # An AlbertTextModel wraps the task model.
        model = getattr(model, "task_model", model)
        labels = _run_labels(args.source, model)
        before = file_states(args.output)
        save_hf_checkpoint(
            model, args.output, vocab=vocab, lowercase=lowercase, labels=labels
        )
    _log(f"wrote {', '.join(written_since(args.output, before))} in {args.output}")
    config = os.path.join(args.output, HF_TOKENIZER_CONFIG)
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as f:
            told = json.load(f)
        kind, lowercase = told["tokenizer_class"], told["do_lower_case"]
        _log(f"tokenizer: {kind}, do_lower_case={lowercase}")


def _run_labels(source, model):
    """A classifier's labels from the `settings.json` of the fine-tuning run
    beside `source` (its best.keras), else None (LABEL_0, LABEL_1, ...)."""
    from checkpoints_convert.backbone_loader import run_labels

    if getattr(model, "num_classes", 1) < 2:
        return None
    labels = run_labels(source)
    if not labels or len(labels) != model.num_classes:
        return None
    settings = os.path.join(os.path.dirname(os.path.abspath(source)), "settings.json")
    _log(f"labels (id2label) from {settings}: {', '.join(map(str, labels))}")
    return labels


def _to_keras_hub(args):
    import tempfile

    from albert_keras.tokenizers import AlbertTokenizer
    from checkpoints_convert import keras_hub_writer
    from checkpoints_convert.loader import load_official_checkpoint
    from checkpoints_convert.preset_sources import readable_folder

    with readable_folder(args.source) as source, tempfile.TemporaryDirectory() as tmp:
        vocab = args.vocab
        if source.endswith(".keras"):
            model = _load_keras(args, "--to-keras-hub")
            tokenizer = getattr(model, "tokenizer", None)
            if vocab is None and isinstance(tokenizer, AlbertTokenizer):
                tokenizer.save_assets(tmp)  # a text model's SentencePiece model
                vocab = os.path.join(tmp, os.listdir(tmp)[0])
            vocab = vocab or _vocabulary_beside(source)
        else:
            model = load_official_checkpoint(source, config=args.config)
            _log(model.conversion_report.summary())
            vocab = vocab or model.conversion_report.vocab_path
        if vocab not in (None, args.vocab) and not vocab.endswith((".model", ".spm")):
            _log(f"{vocab} is not a SentencePiece model: no keras-hub tokenizer")
            vocab = None
        before = file_states(args.output)
        keras_hub_writer.save_keras_hub_preset(model, args.output, vocab=vocab)
    _log(f"wrote {', '.join(written_since(args.output, before))} in {args.output}")
    if dropped := keras_hub_writer.dropped_heads(model):
        _log(f"not in the keras-hub preset (a backbone): the {dropped} head(s)")


def _vocabulary_beside(source):
    """The vocabulary beside a .keras file (a run folder's), or None (logged)."""
    from checkpoints_convert.backbone_loader import find_vocabulary

    try:
        vocab = find_vocabulary(source)
    except FileNotFoundError:
        _log(f"no vocabulary beside {source} (pass --vocab): none written")
        return None
    _log(f"vocabulary: {vocab} (beside the model; --vocab to choose another)")
    return vocab


def _to_official(args):
    from checkpoints_convert.writer import save_official_checkpoint

    # An AlbertTextModel (--text-model) wraps the task model.
    model = _load_keras(args, "--to-official")
    model = getattr(model, "task_model", model)
    prefix = save_official_checkpoint(
        model, os.path.join(args.output, "model.ckpt-best")
    )
    _log(
        f"wrote {prefix}.index, {prefix}.data-00000-of-00001 and "
        f"{os.path.join(args.output, 'albert_config.json')}"
    )
    _copy_vocabulary(args)


def _copy_vocabulary(args):
    """The vocabulary beside the written checkpoint, as in a release."""
    from albert_keras.atomic_files import copy_file
    from checkpoints_convert.backbone_loader import find_vocabulary

    try:
        vocab = find_vocabulary(args.source, args.vocab)
    except FileNotFoundError:
        _log(
            f"no vocabulary beside {args.source}: pass --vocab to put the "
            "model's SentencePiece model or vocab.txt beside the checkpoint."
        )
        return
    target = os.path.join(args.output, os.path.basename(vocab))
    copy_file(vocab, target)
    _log(f"wrote {target}")


def main(argv=None) -> int:
    """Runs `albert-convert`; returns the exit status (2 for user errors)."""
    args = build_parser().parse_args(argv)
    from albert_keras.quiet_start import start_tensorflow_quietly
    from checkpoints_convert.conversion_error import ConversionError

    start_tensorflow_quietly()
    try:
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
            _to_keras_hub(args)
        elif args.to_official:
            _to_official(args)
        elif args.to_hf:
            _to_hf(args)
        else:
            _to_keras(args)
    except (ConversionError, OSError, ValueError) as e:
        _log(f"albert-convert: error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
