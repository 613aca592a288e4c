"""The sequence length and prediction count that pretraining TFRecords hold.

TFRecords store fixed-length features, and reading them needs those lengths
(`feature_spec`). `albert-keras create-data` writes 512 tokens by default,
while `albert-keras pretrain` trains on 128 when it makes its own data:
`lengths_from_records` takes the lengths from the records themselves and
refuses flags that contradict them, before any model is built.
"""

from __future__ import annotations

import os


def record_files(file_pattern: str) -> list[str]:
    """The files a glob of records matches, sorted, hidden files left out.

    `tf.io.gfile.glob` matches hidden files where the shell does not, and a
    shard that a killed `create-data` left half-written is one (the
    temporary `.part-00000-of-00001.tfrecord.tmp-...`): read, it would fail
    mid-run or silently hold fewer records.

    Args:
        file_pattern: a glob of TFRecord files.
    """
    import tensorflow as tf

    hidden = os.path.basename(file_pattern).startswith(".")  # asked for by name
    return sorted(
        f
        for f in tf.io.gfile.glob(file_pattern)
        if hidden or not os.path.basename(f.rstrip("/")).startswith(".")
    )


def record_lengths(file_pattern: str) -> tuple[int, int]:
    """(max_seq_length, max_predictions_per_seq) of the first matching record.

    Args:
        file_pattern: a glob of TFRecord files of official pretraining
            examples (`create-data`, or the official
            `create_pretraining_data.py`).

    Example:
    >>> record_lengths("records/*.tfrecord")  # doctest: +SKIP
    (512, 20)
    """
    import tensorflow as tf

    files = record_files(file_pattern)
    if not files:
        raise ValueError(
            f"No pretraining records match {file_pattern!r}. Write them with "
            "`albert-keras create-data`."
        )
    folders = [path for path in files if tf.io.gfile.isdir(path)]
    if folders and folders == [file_pattern]:
        raise ValueError(
            f"{file_pattern!r} is a folder; pass its records: "
            f"'{file_pattern.rstrip('/')}/*.tfrecord'."
        )
    if folders:  # the training reader would fail on it mid-run
        raise ValueError(
            f"{file_pattern!r} matches the folder {folders[0]!r}: pass record files "
            "only (e.g. 'records/*.tfrecord')."
        )
    try:
        first = next(iter(tf.data.TFRecordDataset(files[:1]).take(1)), None)
    except tf.errors.OpError:  # DataLossError: no TFRecord frame
        raise ValueError(
            f"{files[0]} is not a TFRecord file: pass the records create-data "
            "wrote, or text files as --input (pretrain makes the records)."
        ) from None
    if first is None:
        raise ValueError(f"{files[0]} holds no records: make it again (create-data).")
    features = tf.train.Example.FromString(first.numpy()).features.feature
    if "input_ids" not in features or "masked_lm_weights" not in features:
        raise ValueError(
            f"{files[0]} holds no `input_ids` or `masked_lm_weights`: it is not "
            "a file of pretraining records (make them with `albert-keras create-data`)."
        )
    weights = features["masked_lm_weights"].float_list.value
    if "masked_lm_positions" not in features or not any(weights):
        raise ValueError(
            f"{files[0]} holds unmasked records (no masked position: made with "
            "create-data --masked-lm-prob 0, for dynamic masking in Python, "
            "`pretraining_dataset(..., dynamic_masking=True)`); the pretrain "
            "command reads masked ones: make them without --masked-lm-prob 0."
        )
    return (
        len(features["input_ids"].int64_list.value),
        len(features["masked_lm_positions"].int64_list.value),
    )


_FLAGS = {
    "max_seq_length": "--max-seq-length",
    "max_predictions_per_seq": "--max-predictions-per-seq",
}


def lengths_from_records(args) -> None:
    """Sets `args.max_seq_length` and `args.max_predictions_per_seq` from
    `args.records` (and `args.eval_records`) where the flags are not given;
    refuses given flags, or held-out records, that differ from them.

    Example:
    >>> import argparse
    >>> args = argparse.Namespace(records=None, eval_records=None)
    >>> lengths_from_records(args)  # no records: nothing to do
    """
    given = {key: getattr(args, key, None) for key in _FLAGS}
    for flag, pattern in (
        ("--records", args.records),
        ("--eval-records", args.eval_records),
    ):
        if not pattern:
            continue
        for key, found in zip(_FLAGS, record_lengths(pattern), strict=True):
            value = getattr(args, key, None)
            if value is None:
                setattr(args, key, found)
            elif value != found and given[key] is None:  # read from --records
                raise ValueError(
                    f"{flag} {pattern!r} hold {key} = {found}, and --records "
                    f"{args.records!r} hold {value}: held-out records need the "
                    f"training records' lengths. Make them with create-data "
                    f"{_FLAGS[key]} {value}."
                )
            elif value != found:
                raise ValueError(
                    f"{flag} {pattern!r} hold {key} = {found}, and "
                    f"{_FLAGS[key]} {value} was given: leave {_FLAGS[key]} out "
                    f"(it is read from the records), or make records of that "
                    f"size (create-data {_FLAGS[key]} {value})."
                )
