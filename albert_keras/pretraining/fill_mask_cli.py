"""`albert-keras fill-mask`: a pretrained model's masked-LM head on your texts."""

from __future__ import annotations

import json
import os
import warnings

from albert_keras.cli_help import DefaultsHelpFormatter, positive_int

DEFAULT_INIT = "runs/pretrain"
_MISSING_INIT = (
    "It is the default --init: where `albert-keras pretrain` writes its model. "
    "Run `albert-keras pretrain` first (a few minutes on a CPU), or pass --init "
    "with an official release folder, a TF1 Hub or transformers folder, or a "
    "pretrainer.keras."
)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "fill-mask",
        formatter_class=DefaultsHelpFormatter,
        help="the likeliest words for each [MASK] in your texts (the MLM head)",
        description=(
            "Write [MASK] where a piece is missing; the pretrained model's "
            "masked-LM head gives its likeliest pieces with their probabilities, "
            "as transformers' fill-mask pipeline does. One [MASK] is one piece "
            "(a word of two pieces needs two). Texts come as arguments or from "
            "--input; --output writes every candidate as JSON Lines."
        ),
        epilog='Example: albert-keras fill-mask "Emma was [MASK] of it."',
    )
    parser.add_argument(
        "texts", nargs="*", metavar="TEXT", help="texts with [MASK] in them"
    )
    parser.add_argument(
        "--init",
        default=DEFAULT_INIT,
        help="the pretrained model: the output folder of `albert-keras pretrain`, "
        "a pretrainer.keras, an official release folder, a TF1 Hub, transformers "
        "(AlbertForMaskedLM / AlbertForPreTraining) folder, or a "
        "converted release's name",
    )
    add_text_inputs(parser)
    parser.add_argument(
        "--output", help="write each text and its candidates as JSON Lines here"
    )
    parser.add_argument(
        "--top-k", type=positive_int, default=5, help="candidates per [MASK]"
    )
    parser.add_argument(
        "--max-seq-length",
        type=positive_int,
        default=128,
        help="packed length; masks past it are not predicted",
    )
    parser.set_defaults(run=run_fill_mask)


def add_text_inputs(parser):
    """--vocab, --input and --text-field: what `given_texts` reads."""
    parser.add_argument(
        "--vocab", help="the vocabulary (default: the one beside --init)"
    )
    parser.add_argument(
        "--input",
        help="a file of texts: one per line (.txt), or JSON Lines (.jsonl), CSV "
        "or TSV (a header row) with the text in --text-field",
    )
    parser.add_argument(
        "--text-field", default="text", help="the field (column) of the text"
    )


def run_fill_mask(args):
    import keras

    texts = given_texts(args, 'albert-keras fill-mask "Emma was [MASK] of it."')
    if keras.backend.backend() != "tensorflow":
        # The tokenizer runs in TensorFlow ops: the same command there (a
        # model pretrained on JAX loads on TensorFlow as it is).
        from albert_keras.quiet_start import rerun_on_tensorflow

        return rerun_on_tensorflow(args.argv)
    model = load_fill_mask_model(args.init, args.vocab, args.max_seq_length, args.top_k)
    results = model.fill_mask(texts)
    for text, masks in zip(texts, results, strict=True):
        print(format_candidates(text, masks, args.max_seq_length))
    if args.output:
        from albert_keras.atomic_files import atomic_write

        with atomic_write(args.output, "w", encoding="utf-8") as f:
            for text, masks in zip(texts, results, strict=True):
                f.write(json.dumps({"text": text, "masks": masks}) + "\n")
        print(f"Wrote {args.output}: {len(texts)} texts.")
    return 0


def given_texts(args, example):
    """The texts of the arguments and of --input; ValueError for none, with
    `example`, a command line that gives some."""
    texts = list(args.texts)
    if args.input:
        texts += read_texts(args.input, args.text_field)
    if not texts:
        raise ValueError(
            f"no text given: write them, e.g. {example}, or pass --input FILE."
        )
    return texts


def read_texts(path, field="text"):
    """The texts of a `.txt` (a line each, blank lines skipped), `.jsonl`,
    `.csv` or `.tsv` file (the text in `field`; a CSV/TSV with a header row).

    Example:
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "texts.jsonl")
    >>> _ = open(path, "w").write('{"text": "It [MASK]."}\\n')
    >>> read_texts(path)
    ['It [MASK].']
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--input {path!r} does not exist.")
    if path.endswith((".csv", ".tsv")):
        return _column_texts(path, field)
    with open(path, encoding="utf-8-sig") as f:
        lines = [(n, line.rstrip("\r\n")) for n, line in enumerate(f, 1)]
    lines = [(n, line) for n, line in lines if line.strip()]
    if not path.endswith((".jsonl", ".json")):
        return [line for _, line in lines]
    texts = []
    for n, line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} line {n} is not JSON ({e.msg}).") from None
        text = record.get(field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            keys = ", ".join(record) if isinstance(record, dict) else "none"
            raise ValueError(
                f"{path} line {n} has no text in field {field!r} (its fields: "
                f"{keys}): pass --text-field with the field that holds it."
            )
        texts.append(text)
    return texts


def _column_texts(path, field):
    """The `field` column of a CSV (TSV) file with a header row."""
    import csv

    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t" if path.endswith(".tsv") else ",")
        if field not in (reader.fieldnames or []):
            columns = ", ".join(reader.fieldnames or []) or "none"
            raise ValueError(
                f"{path} has no column {field!r} (its header: {columns}): pass "
                "--text-field with the column that holds the text."
            )
        texts = []
        for row in reader:
            if row[field] is None:
                raise ValueError(
                    f"{path} line {reader.line_num} has fewer cells than its header: "
                    "each row needs one per column (quote cells holding commas)."
                )
            texts.append(row[field])
    return texts


def format_candidates(text, masks, max_seq_length):
    """The lines `fill-mask` prints for one text.

    Example:
    >>> print(format_candidates("It [MASK].", [[
    ...     {"token": "\u2581rains", "score": 0.5, "text": "It rains."},
    ...     {"token": "\u2581is", "score": 0.25, "text": "It is."}]], 128))
    It [MASK].
      [MASK] 1: rains 0.500 | is 0.250   -> It rains.
    """
    lines = [text]
    if not masks:
        lines.append("  (no [MASK] in this text: nothing to fill)")
    for number, candidates in enumerate(masks, 1):
        if not candidates:
            lines.append(
                f"  [MASK] {number}: past --max-seq-length {max_seq_length} pieces "
                "(or past the 20 masks a text can have): not predicted"
            )
            continue
        shown = " | ".join(
            f"{c['token'].lstrip(chr(0x2581))} {c['score']:.3f}" for c in candidates
        )
        lines.append(f"  [MASK] {number}: {shown}   -> {candidates[0]['text']}")
    return "\n".join(lines)


def load_fill_mask_model(init, vocab=None, sequence_length=128, top_k=5):
    """An `AlbertFillMaskTextModel` of `init`'s pretrainer and vocabulary.

    Args:
        init: what --init takes.
        vocab: the vocabulary, default the one beside `init`.
        sequence_length: packed length (at most the model's positions).
        top_k: candidates per mask.

    Raises:
        ValueError: `init` holds no masked-LM head (a backbone, a fine-tuned
            model, a checkpoint without `cls/predictions`).
        FileNotFoundError: no such model or vocabulary.
    """
    from albert_keras.models.albert_fill_mask_text_model import (
        AlbertFillMaskTextModel,
    )
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.backbone_loader import find_vocabulary, resolve_init

    path = resolve_init(init, _MISSING_INIT if init == DEFAULT_INIT else "")
    pretrainer = _load_pretrainer(path)
    tokenizer = load_tokenizer(find_vocabulary(path, vocab))
    length = min(sequence_length, pretrainer.backbone.config.max_position_embeddings)
    return AlbertFillMaskTextModel(pretrainer, tokenizer, length, top_k=top_k)


def _load_pretrainer(path):
    """The `AlbertPretrainer` at `path`, refused without a trained MLM head."""
    from albert_keras.models.albert_pretrainer import AlbertPretrainer
    from albert_keras.presets import PRESETS

    if path in PRESETS:
        raise ValueError(
            f"--init {path!r} is a preset without released weights: a random "
            "model fills masks at random. Pass a pretrained model (the output "
            "folder of `albert-keras pretrain`, an official release folder, ...)."
        )
    if path.endswith(".keras"):
        import keras

        import albert_keras  # noqa: F401  (registers every class of ours)

        model = keras.saving.load_model(path, compile=False)
        model = getattr(model, "task_model", model)  # a text model's pretrainer
        if not isinstance(model, AlbertPretrainer):
            raise ValueError(_no_mlm_head(path, type(model).__name__))
        return model
    from checkpoints_convert import load_official_checkpoint

    with warnings.catch_warnings():  # the SOP head is not used here
        warnings.filterwarnings("ignore", message="The checkpoint has no sop head")
        model = load_official_checkpoint(path, model="pretrainer")
    if "mlm" in model.conversion_report.new_heads:
        raise ValueError(_no_mlm_head(path, "checkpoint without cls/predictions/*"))
    return model


def _no_mlm_head(path, what):
    return (
        f"--init {path!r} holds a {what}: fill-mask needs the masked-LM head of "
        "pretraining. Pass the output folder of `albert-keras pretrain`, its "
        "pretrainer.keras, an official release folder, or a transformers "
        "AlbertForMaskedLM / AlbertForPreTraining folder."
    )
