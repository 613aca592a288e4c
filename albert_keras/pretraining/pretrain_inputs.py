"""The inputs of an `albert-keras pretrain` run: text, vocabulary, records, model.

`check_input_flags` refuses input flags that contradict each other,
`prepare_text` holds
documents out of the input, `run_vocabulary` picks (or trains) the vocabulary
and `run_records` makes the TFRecords once, in the run's `data/` folder, so a
resumed run reuses them; `datasets` reads them.
`report_data` says how often the run sees each training instance and how
many predictions its held-out accuracies rest on, warning where the figures
would mislead.
"""

from __future__ import annotations

import math
import os

from albert_keras.atomic_files import read_json, write_json
from albert_keras.pretraining.init_checkpoint import check_init_checkpoint
from albert_keras.pretraining.record_lengths import lengths_from_records
from albert_keras.sample_text import CORPUS_PATH, SPM_MODEL_PATH

# Passes over the same instances (the same pairs and masks) above which a run
# warns. BERT's recipe (dupe factor 10, about 40 passes over its text) sees
# each instance about 4 times; at 10 and more a small model starts to learn the
# instances by heart: its training loss keeps falling while the held-out one
# does not, and the training accuracies overstate what it learned.
MAX_REPEATS = 10
# Held-out accuracies with a wider 95% interval (half-width) cannot tell runs
# apart: the settings compared in the README differ by 0.01 to 0.05. An
# accuracy near 0.5 needs 385 predictions for +-0.05; fewer are warned of.
MAX_MARGIN = 0.05
MIN_SAMPLE = math.ceil((1.96 * 0.5 / MAX_MARGIN) ** 2)


def resolve_defaults(args):
    """Smaller sequences and fewer steps for the embedded default (a few
    minutes); the lengths of --records from the records."""
    embedded = not args.input and not getattr(args, "records", None)
    if not embedded and not args.input:  # --records: their own lengths
        lengths_from_records(args)
    if args.max_seq_length is None:
        args.max_seq_length = 64 if embedded else 128
    if args.max_predictions_per_seq is None:
        args.max_predictions_per_seq = 10 if embedded else 20
    if getattr(args, "steps", 0) is None:
        args.steps = 400 if embedded else 1000
    if hasattr(args, "steps_per_epoch") and args.steps_per_epoch is None:
        args.steps_per_epoch = epoch_length(args.steps, args.steps_per_execution)


def epoch_length(steps, steps_per_execution=1, longest=100):
    """The largest multiple of `steps_per_execution` up to `longest` dividing `steps`.

    So a run ends at exactly `steps` at an epoch end. Example:
    >>> epoch_length(400), epoch_length(30), epoch_length(250, 2)
    (100, 30, 50)
    """
    for length in range(min(longest, steps), 0, -1):
        if steps % length == 0 and length % steps_per_execution == 0:
            return length
    return steps_per_execution  # steps is no multiple of it: refused later


def check_input_flags(args):
    """Refuses input flags that contradict each other, before any data is made."""
    if args.vocab_size is not None:
        if args.vocab:
            raise ValueError(
                "Pass --vocab (an existing vocabulary) or --vocab-size (train "
                "one on the input), not both."
            )
        if args.records:
            raise ValueError(
                "--vocab-size trains a vocabulary for new records; --records "
                "are already tokenized: pass the --vocab they were made with."
            )
    check_init_checkpoint(args.init_checkpoint)
    if args.held_out_every is not None and args.records:
        raise ValueError(
            "--held-out-every splits --input text; with --records pass the "
            "held-out set as --eval-records."
        )


def prepare_text(args, data_dir):
    """The training files and held-out file (or None) for create-data."""
    from albert_keras.pretraining.text_documents import hold_out_documents

    every = args.held_out_every or (None if args.input else 10)
    if every is None:
        return list(args.input), None
    train, held, counts = hold_out_documents(
        args.input or [CORPUS_PATH], os.path.join(data_dir, "text"), every
    )
    kept = sum(c["documents"] - c["held_out"] for c in counts.values())
    held_count = sum(c["held_out"] for c in counts.values())
    print(f"Held out {held_count} of {kept + held_count} documents (every {every}th)")
    return [train], held


def run_vocabulary(args, data_dir, train_files):
    """The vocabulary file: --vocab, one trained on the training text, or the
    embedded one."""
    if args.vocab_size is None:
        if args.init_checkpoint and not args.vocab:
            # The vocabulary the model was made with (a release's
            # 30k-clean.model, or the vocab.model beside a pretrainer.keras).
            from checkpoints_convert.backbone_loader import find_vocabulary

            try:
                return find_vocabulary(args.init_checkpoint, None)
            except FileNotFoundError:
                pass  # the embedded one; a size mismatch is reported later
        if args.input and not args.vocab:
            print(
                "Tokenizing with the embedded austen-8k.model (8000 pieces from "
                "Jane Austen's novels); for other text, --vocab-size 16000 trains "
                "a vocabulary on the input.",
                flush=True,
            )
        return args.vocab or SPM_MODEL_PATH
    from albert_keras.tokenizers.vocabulary import train_sentencepiece

    prefix = os.path.join(data_dir, "vocab")
    if not os.path.exists(prefix + ".model"):  # trained once, kept on resume
        if train_files is None:
            raise ValueError(
                f"The data in {data_dir} was made without --vocab-size: resume "
                "without it, or start a new run in another --output-dir."
            )
        print(
            f"Training a {args.vocab_size}-piece SentencePiece vocabulary ...",
            flush=True,
        )
        train_sentencepiece(
            train_files, prefix, args.vocab_size, lowercase=args.lowercase
        )
    return prefix + ".model"


def stats_path(data_dir):
    """Written when the run's data is complete (its stats)."""
    return os.path.join(data_dir, "stats.json")


def run_records(args, data_dir, inputs, held, vocab):
    """The training and held-out TFRecords: --records and --eval-records, or
    those of `data_dir`, made from `inputs` and `held` on the first run."""
    if args.records is not None:
        return args.records, args.eval_records
    if not os.path.exists(stats_path(data_dir)):
        _create_records(args, data_dir, inputs, held, vocab)
    eval_records = args.eval_records
    if os.path.isdir(os.path.join(data_dir, "eval")):
        eval_records = os.path.join(data_dir, "eval", "*.tfrecord")
    return os.path.join(data_dir, "train", "*.tfrecord"), eval_records


def _create_records(args, data_dir, inputs, held, vocab):
    """Training records in `data_dir`/train, held-out ones in `data_dir`/eval."""
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_data,
        format_stats,
    )

    print("Creating pretraining data ...", flush=True)
    # The embedded corpus has a paragraph per line: cut into sentences.
    split = args.split_sentences or not args.input
    stats = create_pretraining_data(
        inputs,
        os.path.join(data_dir, "train", ""),
        split_sentences=split,
        **run_data_options(args, vocab),
    )
    print(format_stats(stats))
    if held:
        options = dict(
            run_data_options(args, vocab),
            dupe_factor=1,
            seed=args.seed + 1,
            num_shards=1,
        )
        create_pretraining_data(
            [held],
            os.path.join(data_dir, "eval", ""),
            split_sentences=split,
            verbose=False,
            **options,
        )
    # Written last: its presence says the data is complete.
    write_json(stats_path(data_dir), {k: v for k, v in stats.items() if k != "files"})


def run_data_options(args, vocab):
    """`create_pretraining_data`'s keyword arguments from the flags and `vocab`."""
    from albert_keras.pretraining.create_data_cli import data_options

    resolve_defaults(args)
    return dict(data_options(args), vocab=vocab)


def repeat_report(args, data_dir) -> tuple[str, str | None]:
    """How often the run sees each training instance, and a warning (or None)
    when more than `MAX_REPEATS` times.

    Known for the data a run makes (its `stats.json`), not for --records
    (counting them would read them all): ("", None) then.

    Example:
    >>> line, warning = repeat_report(args, "runs/pretrain/data")  # doctest: +SKIP
    >>> line  # doctest: +SKIP
    '400 steps x batch 32 = 12,800 sequences: 0.7 passes over 17,997 instances'
    """
    stats = read_json(stats_path(data_dir)) if args.records is None else None
    instances = (stats or {}).get("instances")
    if not instances:
        return "", None
    batch = args.batch_size * getattr(args, "gradient_accumulation_steps", 1)
    seen = args.steps * batch
    repeats = seen / instances
    line = (
        f"{args.steps} steps x batch {batch} = {seen:,} sequences: "
        f"{repeats:.1f} passes over {instances:,} training instances"
    )
    if repeats <= MAX_REPEATS:
        return line, None
    dupe = args.dupe_factor
    text = f"{stats.get('bytes', 0) / 1e6:.2f} MB" if stats.get("bytes") else "text"
    warning = (
        f"each training instance is seen {repeats:.0f} times ({seen:,} sequences "
        f"from {instances:,} instances: {stats.get('documents', '?')} documents, "
        f"{text}, --dupe-factor {dupe}; the text itself {repeats * dupe:.0f} "
        f"times). The model learns these pairs and masks by heart: its training "
        f"loss and accuracies will overstate what it learned. Use more text "
        f"(--input), fewer --steps ({max(1, instances // batch):,} "
        f"steps see each instance once), or a larger --dupe-factor (new pairs "
        f"and masks of the same text; in a new --output-dir, since this one's "
        f"data is made)."
    )
    return line, warning


def datasets(args, records, eval_records):
    """`run_pretraining`'s training dataset function and held-out dataset."""
    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

    lengths = (args.max_seq_length, args.max_predictions_per_seq)

    def train_dataset(skip):
        return pretraining_dataset(
            records, args.batch_size, *lengths, seed=args.seed
        ).skip(skip)

    eval_dataset = None
    if eval_records:
        eval_dataset = pretraining_dataset(
            eval_records, args.batch_size, *lengths, training=False
        )
    return train_dataset, eval_dataset


def margin(accuracy: float, count: int) -> float:
    """Half-width of the 95% interval of an accuracy on `count` predictions:
    1.96 binomial standard errors (masks of one instance are not independent,
    so the MLM one is a lower bound).

    Example:
    >>> round(margin(0.5, 100), 3)
    0.098
    """
    if count <= 0:
        return math.inf
    p = min(max(accuracy, 0.5 / count), 1 - 0.5 / count)
    return 1.96 * math.sqrt(p * (1 - p) / count)


def held_out_report(sizes: dict, metrics: dict | None = None):
    """The held-out set's line (its sizes, or its accuracies on them when
    `metrics` are given) and warnings for samples too small to compare runs.

    Args:
        sizes: `held_out_sizes` of the held-out set.
        metrics: `run_pretraining`'s metrics (`eval_mlm_accuracy`, ...).

    Returns: (line, [warning, ...]).
    """
    pairs, predictions = sizes["sop_pairs"], sizes["mlm_predictions"]
    baseline = sizes["mlm_unigram_baseline"]
    if metrics is None:  # before training: SOP starts at chance (0.5)
        line = (
            f"{pairs:,} SOP pairs and {predictions:,} masked predictions "
            f"(unigram baseline {baseline:.3f}), scored at each epoch end (val_*)"
        )
        scores = [("SOP accuracy", 0.5, pairs, "pairs")]
    else:
        mlm, sop = metrics["eval_mlm_accuracy"], metrics["eval_sop_accuracy"]
        line = (
            f"MLM accuracy {mlm:.3f} on {predictions:,} masked predictions "
            f"(±{margin(mlm, predictions):.3f} at 95%; unigram baseline "
            f"{baseline:.3f}), SOP accuracy {sop:.3f} on {pairs:,} pairs "
            f"(±{margin(sop, pairs):.3f}; chance 0.5)"
        )
        scores = [
            ("MLM accuracy", mlm, predictions, "masked predictions"),
            ("SOP accuracy", sop, pairs, "pairs"),
        ]
    warnings = [
        f"held-out {name} on {count:,} {unit}: too few to compare runs (±"
        f"{margin(accuracy, count):.3f} at 95%, wider than ±{MAX_MARGIN}). Hold "
        "out more text: a smaller --held-out-every, or more --eval-records (all "
        "of them: no --eval-steps)."
        for name, accuracy, count, unit in scores
        if margin(accuracy, count) > MAX_MARGIN
    ]
    return line, warnings


def report_data(args, data_dir, sizes):
    """Prints how often the run sees its training instances and the held-out
    set's sizes (`held_out_sizes`, or None); warnings go to stderr."""
    line, warning = repeat_report(args, data_dir)
    warnings = [warning] if warning else []
    if line:
        print(line, flush=True)
    if sizes:
        line, small = held_out_report(sizes)
        print(f"Held-out {_held_out_name(args)}: {line}", flush=True)
        warnings += small
    _warn(warnings)


def report_held_out(args, sizes, metrics):
    """Prints the held-out accuracies with their sample sizes; warnings to stderr."""
    line, warnings = held_out_report(sizes, metrics)
    print(f"\nHeld-out {_held_out_name(args)}: {line}", flush=True)
    _warn(warnings)


def _held_out_name(args):
    return "documents" if args.input else "set" if args.records else "chapters"


def _warn(warnings):
    import sys

    for warning in warnings:
        print(f"albert-keras pretrain: warning: {warning}", file=sys.stderr, flush=True)
