"""Held-out TFRecords on JAX over several devices: whole batches only.

`--distribution data` splits every batch over the devices, so a held-out set
whose size the batch does not divide failed at its last batch ("the dimension
size is 14 ... should evenly divide the shape"). On several devices the last
partial batch is dropped, as `PretrainingBatches` does without TensorFlow; on
one device it is kept.
"""

import argparse

import keras
import pytest

from albert_keras.cli import main
from albert_keras.pretraining.pretrain_cli import _datasets
from albert_keras.pretraining.record_lengths import lengths_from_records
from albert_keras.sample_text import SPM_MODEL_PATH

TEXT = "\n\n".join(
    "\n".join(f"Sentence {i} of the letter {d} was written by Emma." for i in range(6))
    for d in range(8)
)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Records of 32 tokens at two sequence lengths: {length: pattern}."""
    folder = tmp_path_factory.mktemp("held_out")
    corpus = folder / "corpus.txt"
    corpus.write_text(TEXT + "\n", encoding="utf-8")
    made = {}
    for length in (32, 16):
        args = ["create-data", "--input", str(corpus), "--vocab", SPM_MODEL_PATH]
        args += ["--output", f"{folder / str(length)}/", "--max-seq-length"]
        assert main(args + [str(length), "--max-predictions-per-seq", "4"]) == 0
        made[length] = str(folder / str(length) / "*.tfrecord")
    return made


def _batch_sizes(records, monkeypatch, devices):
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    monkeypatch.setattr(keras.distribution, "list_devices", lambda: ["d"] * devices)
    args = argparse.Namespace(
        records=records[32], eval_records=records[32], batch_size=8,
        max_seq_length=32, max_predictions_per_seq=4, seed=0, coordinator=None,
    )  # fmt: skip
    _, held_out = _datasets(args, None, None, None, SPM_MODEL_PATH)
    return [len(batch["input_ids"]) for batch in held_out]


def test_several_devices_get_whole_held_out_batches(records, monkeypatch):
    kept = _batch_sizes(records, monkeypatch, devices=1)
    assert kept[-1] % 8, "the fixture needs a partial last batch"
    assert _batch_sizes(records, monkeypatch, devices=8) == kept[:-1]


def test_held_out_records_of_another_length_name_the_training_records(records):
    args = argparse.Namespace(
        records=records[32], eval_records=records[16],
        max_seq_length=None, max_predictions_per_seq=None,
    )  # fmt: skip
    with pytest.raises(ValueError) as error:
        lengths_from_records(args)
    message = str(error.value)
    assert "max_seq_length = 16" in message and "--records" in message
    assert "create-data --max-seq-length 32" in message
    assert "leave --max-seq-length out" not in message
