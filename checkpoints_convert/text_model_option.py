"""`albert-convert --text-model N`: the converted task model with its tokenizer
inside, taking raw text (an `AlbertTextModel` of `with_tokenizer`); and the
flags (--text-model among them) that --to-hf / --to-official / --to-keras-hub
do not use, refused."""

from __future__ import annotations

import sys

TEXT_MODEL_NAMES = ("classifier", "multiple_choice", "span_qa", "squad_v2")


def check_text_model(args):
    """--text-model with a model that takes no text is refused before loading."""
    from checkpoints_convert.conversion_error import ConversionError

    if args.text_model is not None and args.model not in TEXT_MODEL_NAMES:
        raise ConversionError(
            "--text-model wraps a classifier, multiple_choice, span_qa or "
            f"squad_v2 model (inputs are texts). Received: --model {args.model}"
        )


def with_tokenizer_of(model, vocab, args):
    """`model` with the tokenizer of `vocab` inside (`with_tokenizer`).

    Args:
        model: the converted task model (classifier, choice or SQuAD).
        vocab: its vocabulary (SentencePiece or WordPiece), or None.
        args: the parsed flags: `text_model` (sequence length), `model`,
            `null_threshold`.

    Example:
    >>> with_tokenizer_of(classifier, "30k-clean.model", args)  # doctest: +SKIP
    <AlbertTextModel ...>
    """
    from albert_keras.models import with_tokenizer
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.hf_sentencepiece_files import vocabulary_lowercase

    if vocab is None:
        raise ConversionError(
            "--text-model needs the release's vocabulary: none was found beside "
            "the checkpoint or in its assets/ (30k-clean.model, vocab_chinese.txt, "
            "any *.model). Pass it with --vocab."
        )
    # SentencePiece or WordPiece, by content; cased as a transformers folder
    # says, else as the vocabulary was made.
    lowercase = vocabulary_lowercase(vocab)
    tokenizer = load_tokenizer(vocab, lowercase=lowercase)
    print(f"tokenizer: {vocab} (lowercase={lowercase})", file=sys.stderr, flush=True)
    options = {}
    if args.model in ("span_qa", "squad_v2"):
        # The official run_squad defaults (64 question tokens), shortened
        # where the windows leave no room for them.
        options = dict(
            max_query_length=max(1, min(64, args.text_model - 4)),
            null_threshold=args.null_threshold,
        )
    try:
        return with_tokenizer(model, tokenizer, args.text_model, **options)
    except ValueError as e:
        raise ConversionError(f"--text-model {args.text_model}: {e}") from None


def refuse_ignored_flags(args, target):
    """--to-hf, --to-official and --to-keras-hub write the source's own
    model: the flags that build or wrap another one did nothing there.

    >>> import argparse
    >>> flags = dict(model=None, num_classes=None, text_model=None, config=None)
    >>> refuse_ignored_flags(argparse.Namespace(
    ...     null_threshold=None, saved_model=None, **flags), "--to-hf")
    """
    from checkpoints_convert.conversion_error import ConversionError

    flags = ["model", "num_classes", "text_model", "null_threshold", "saved_model"]
    if target != "--to-keras-hub":  # it reads a checkpoint with --config
        flags.append("config")
    given = ["--" + f.replace("_", "-") for f in flags if vars(args)[f] is not None]
    if given:
        raise ConversionError(
            f"{', '.join(given)} {'has' if len(given) == 1 else 'have'} no effect "
            f"with {target}, which writes the source's own model (heads "
            "included): leave them out, or convert to a .keras file with them "
            f"first (albert-convert SOURCE --model M --output m.keras), then {target}."
        )
