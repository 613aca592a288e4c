"""The data of a `pretrain` run where TensorFlow is not installed: NumPy instances.

With TensorFlow, `albert-keras pretrain` writes TFRecords and reads them with
`tf.data` (`pretrain_inputs.run_records`). Without it (a JAX or torch
machine), the same instances (`create_pretraining_arrays`: the same pairs,
masks and seeds) are made once into `data/train.npz` and `data/eval.npz` and
served by `PretrainingBatches`, a Keras `PyDataset`.
"""

from __future__ import annotations

import os

import numpy as np

from albert_keras.atomic_files import atomic_write, write_json
from albert_keras.pretraining.pretrain_inputs import stats_path


def vocabulary_size(vocab: str) -> int:
    """The pieces of a SentencePiece `.model` or tokens of a WordPiece `vocab.txt`."""
    from albert_keras.tokenizers.vocabulary_files import (
        read_sentencepiece_model,
        read_wordpiece_vocabulary,
    )

    if vocab.endswith(".model"):
        return read_sentencepiece_model(vocab)[1].get_piece_size()
    return len(read_wordpiece_vocabulary(vocab))


def check_array_inputs(args, vocab: str) -> None:
    """Refuses what only the TensorFlow pipeline reads, naming the fix."""
    if args.records or args.eval_records:
        raise ValueError(
            "--records and --eval-records are TFRecords, read with tf.data: "
            "install TensorFlow (pip install tensorflow), or pass the text as "
            "--input (the run then makes its data without TensorFlow)."
        )
    if not vocab.endswith(".model"):
        raise ValueError(
            f"Without TensorFlow, pretraining data is tokenized with a "
            f"SentencePiece .model; {vocab!r} is a WordPiece vocabulary, whose "
            "tokenizer runs in tensorflow-text. Install tensorflow-text, or "
            "pass --vocab-size N to train a SentencePiece vocabulary."
        )


def run_arrays(args, data_dir, inputs, held, vocab):
    """The training and held-out instances ({name: array}, or None for no
    held-out set): those of `data_dir`, made from `inputs` and `held` on the
    first run."""
    train_path = os.path.join(data_dir, "train.npz")
    eval_path = os.path.join(data_dir, "eval.npz")
    if not os.path.exists(stats_path(data_dir)):
        _create_arrays(args, data_dir, inputs, held, vocab)
    train = dict(np.load(train_path))
    held_out = dict(np.load(eval_path)) if os.path.exists(eval_path) else None
    return train, held_out


def _create_arrays(args, data_dir, inputs, held, vocab):
    from albert_keras.pretraining.pretrain_inputs import run_data_options
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_arrays,
        format_stats,
    )

    print("Creating pretraining data (NumPy: TensorFlow is not installed) ...")
    split = args.split_sentences or not args.input
    options = run_data_options(args, vocab)
    options.pop("num_shards", None)
    features, stats = create_pretraining_arrays(
        inputs, split_sentences=split, **options
    )
    print(format_stats(stats))
    os.makedirs(data_dir, exist_ok=True)
    _save(os.path.join(data_dir, "train.npz"), features)
    if held:
        options.update(dupe_factor=1, seed=args.seed + 1)
        held_features, _ = create_pretraining_arrays(
            [held], split_sentences=split, verbose=False, **options
        )
        _save(os.path.join(data_dir, "eval.npz"), held_features)
    # Written last: its presence says the data is complete.
    write_json(stats_path(data_dir), {k: v for k, v in stats.items() if k != "files"})


def _save(path, features):
    with atomic_write(path, "wb") as f:
        np.savez(f, **features)


def array_datasets(args, train, held_out):
    """`run_pretraining`'s training dataset function and held-out batches."""
    from albert_keras.pretraining.pretraining_batches import PretrainingBatches

    def train_dataset(skip):
        batches = args.steps * args.gradient_accumulation_steps
        return PretrainingBatches(
            train, args.batch_size, steps=batches, skip=skip, seed=args.seed
        )

    eval_dataset = None
    if held_out is not None:
        eval_dataset = PretrainingBatches(
            held_out, args.batch_size, keep_partial=one_device(args)
        )
    return train_dataset, eval_dataset


def one_device(args) -> bool:
    """Whether the job has one device (no split a batch must divide into)."""
    import keras

    if args.coordinator:
        return False
    if keras.backend.backend() != "jax":
        return True
    # Also without --distribution: its held-out figures are then those of a
    # run split over the same devices.
    return len(keras.distribution.list_devices()) == 1
