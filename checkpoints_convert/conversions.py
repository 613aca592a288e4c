"""The four conversions of `albert-convert`, each from its parsed arguments:
to a `.keras` file, to the official TF1 format, to transformers and to
keras-hub. Progress and what was written go to stderr (`cli.py` parses the
flags and turns errors into one line).
"""

from __future__ import annotations

import json
import os
import sys
import time

from checkpoints_convert.hf_labels import keep_labels_beside
from checkpoints_convert.text_model_option import with_tokenizer_of
from checkpoints_convert.written_files import file_states, written_since


def log(message):
    """Prints a line of progress on stderr (stdout stays free)."""
    print(message, file=sys.stderr, flush=True)


def to_keras(args):
    """SOURCE -> the `.keras` file OUTPUT (and `--saved-model`)."""
    from albert_keras.atomic_files import make_folder, save_atomically
    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.loader import load_official_checkpoint
    from checkpoints_convert.preset_sources import readable_folder

    if not args.output.endswith(".keras"):
        raise ConversionError(
            f"--output must be a .keras file. Received: {args.output!r}"
        )
    kwargs = {"num_classes": args.num_classes} if args.num_classes is not None else {}
    start = time.perf_counter()
    log(f"reading {args.source} as {args.model}")
    with readable_folder(args.source) as source:
        model = load_official_checkpoint(
            source, model=args.model, config=args.config, **kwargs
        )
        report = model.conversion_report
        log(report.summary())
        vocab = args.vocab or report.vocab_path
        if args.text_model is not None:
            model = with_tokenizer_of(model, vocab, args)
        make_folder(os.path.dirname(os.path.abspath(args.output)), args.output)
        save_atomically(args.output, model.save)
        log(f"wrote {args.output} ({time.perf_counter() - start:.1f}s)")
        kept = _keep_vocabulary_beside(vocab, args.output) if vocab else None
        told = keep_labels_beside(source, model, args.output, kept)
        if told:  # a transformers classifier's id2label, as a run keeps labels
            log(told)
    if args.saved_model:
        if args.text_model is not None:
            save_atomically(args.saved_model, model.export_serving)
        else:
            save_atomically(args.saved_model, lambda p: model.export(p, verbose=False))
        log(f"wrote SavedModel {args.saved_model}")


def _keep_vocabulary_beside(vocab, output):
    """`X.keras` gets its vocabulary as `X.model` (SentencePiece) or
    `X.vocab.txt` (WordPiece): what `--init X.keras` and a bare preset name
    of the cache find. Returns that path."""
    from albert_keras.atomic_files import copy_file
    from albert_keras.tokenizers.vocabulary_files import vocabulary_path_beside

    target = vocabulary_path_beside(output, vocab)
    copy_file(vocab, target)
    log(f"wrote {target} (the vocabulary)")
    return target


def _load_keras(args, flag):
    import keras

    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.keras_file_loader import check_keras_file

    check_keras_file(args.source)
    if os.path.isfile(args.output):
        raise ConversionError(
            f"--output must be a folder with {flag}. Received the file {args.output!r}"
        )
    log(f"reading {args.source}")
    try:
        model = keras.saving.load_model(args.source)
    except (ValueError, OSError) as e:
        raise ConversionError(
            f"Cannot load {args.source!r} as a .keras model: {e}"
        ) from None
    return model


def to_hf(args):
    """The `.keras` file SOURCE -> a transformers folder OUTPUT."""
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
    log(f"wrote {', '.join(written_since(args.output, before))} in {args.output}")
    config = os.path.join(args.output, HF_TOKENIZER_CONFIG)
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as f:
            told = json.load(f)
        kind, lowercase = told["tokenizer_class"], told["do_lower_case"]
        log(f"tokenizer: {kind}, do_lower_case={lowercase}")


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
    log(f"labels (id2label) from {settings}: {', '.join(map(str, labels))}")
    return labels


def to_keras_hub(args):
    """SOURCE (any kind) -> a keras-hub preset folder OUTPUT."""
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
            log(model.conversion_report.summary())
            vocab = vocab or model.conversion_report.vocab_path
        if vocab not in (None, args.vocab) and not vocab.endswith((".model", ".spm")):
            log(f"{vocab} is not a SentencePiece model: no keras-hub tokenizer")
            vocab = None
        before = file_states(args.output)
        keras_hub_writer.save_keras_hub_preset(model, args.output, vocab=vocab)
    log(f"wrote {', '.join(written_since(args.output, before))} in {args.output}")


def _vocabulary_beside(source):
    """The vocabulary beside a .keras file (a run folder's), or None (logged)."""
    from checkpoints_convert.backbone_loader import find_vocabulary

    try:
        vocab = find_vocabulary(source)
    except FileNotFoundError:
        log(f"no vocabulary beside {source} (pass --vocab): none written")
        return None
    log(f"vocabulary: {vocab} (beside the model; --vocab to choose another)")
    return vocab


def to_official(args):
    """The `.keras` file SOURCE -> an official TF1 checkpoint in OUTPUT."""
    from checkpoints_convert.writer import save_official_checkpoint

    # An AlbertTextModel (--text-model) wraps the task model.
    model = _load_keras(args, "--to-official")
    model = getattr(model, "task_model", model)
    prefix = save_official_checkpoint(
        model, os.path.join(args.output, "model.ckpt-best")
    )
    log(
        f"wrote {prefix}.index, {prefix}.data-00000-of-00001 and "
        f"{os.path.join(args.output, 'albert_config.json')}"
    )
    _copy_vocabulary(args)


def _copy_vocabulary(args):
    """The vocabulary beside the written checkpoint, as in a release."""
    from albert_keras.atomic_files import copy_file
    from albert_keras.tokenizers.vocabulary_files import VOCABULARY_NAMES
    from checkpoints_convert.backbone_loader import find_vocabulary

    try:
        vocab = find_vocabulary(args.source, args.vocab)
    except FileNotFoundError:
        log(
            f"no vocabulary beside {args.source}: pass --vocab to put the "
            "model's SentencePiece model or vocab.txt beside the checkpoint."
        )
        return
    name = os.path.basename(vocab)
    if vocab.endswith(".txt") and name not in VOCABULARY_NAMES:
        # `zh.vocab.txt` beside zh.keras: a `*_zh` release's name, so that the
        # folder gives it back (converting back, --init); a `.model` is found
        # under any name.
        name = "vocab_chinese.txt"
    target = os.path.join(args.output, name)
    copy_file(vocab, target)
    log(f"wrote {target}")
