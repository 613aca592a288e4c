"""The data of an `albert-keras pretrain` run: held-out text, vocabulary, records.

`prepare_text` holds documents out of the input, `run_vocabulary` picks (or
trains) the vocabulary and `run_records` makes the TFRecords once, in the
run's `data/` folder, so a resumed run reuses them.
"""

from __future__ import annotations

import os

from albert_keras.atomic_files import write_json
from albert_keras.sample_text import CORPUS_PATH, SPM_MODEL_PATH


def resolve_defaults(args):
    """Smaller sequences and fewer steps for the embedded default (a few minutes)."""
    embedded = not args.input and not getattr(args, "records", None)
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
            train_files, prefix + ".tmp", args.vocab_size, lowercase=args.lowercase
        )
        for suffix in (".vocab", ".model"):
            os.replace(prefix + ".tmp" + suffix, prefix + suffix)
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
        **_data_options(args, vocab),
    )
    print(format_stats(stats))
    if held:
        options = dict(
            _data_options(args, vocab),
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


def _data_options(args, vocab):
    from albert_keras.pretraining.create_data_cli import data_options

    resolve_defaults(args)
    return dict(data_options(args), vocab=vocab)
