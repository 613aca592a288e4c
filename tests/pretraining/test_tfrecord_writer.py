"""TFRecordWriter and CRC-32C in NumPy: known checksums, TensorFlow's own bytes."""

import os

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.pretraining.example_encoder import ExampleEncoder
from albert_keras.pretraining.tfrecord_writer import (
    TFRecordWriter,
    crc32c,
    crc32c_batch,
    masked_crc32c,
)


def bitwise_crc32c(data: bytes) -> int:
    """CRC-32C one bit at a time from the polynomial: no tables, nothing shared."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# RFC 3720 (iSCSI), appendix B.4, and the usual check value.
KNOWN = [
    (b"", 0x00000000),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize("data, expected", KNOWN)
def test_crc32c_known_values(data, expected):
    assert crc32c(data) == expected
    assert bitwise_crc32c(data) == expected


def test_crc32c_batch_of_mixed_lengths():
    rng = np.random.default_rng(0)
    lengths = [0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 3001] + list(
        rng.integers(0, 300, 40)
    )
    records = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]
    records += [data for data, _ in KNOWN]
    got = crc32c_batch(records)
    assert got.dtype == np.uint32 and len(got) == len(records)
    assert got.tolist() == [bitwise_crc32c(r) for r in records]
    # Longer records later still see the right zero-run correction.
    assert crc32c_batch([bytes(20_000)]).tolist() == [bitwise_crc32c(bytes(20_000))]
    assert crc32c_batch([]).tolist() == []


def test_masked_crc32c():
    for crc in (0, 1, 0xE3069283, 0xFFFFFFFF):
        rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
        assert masked_crc32c(crc) == (rotated + 0xA282EAD8) % 2**32
    values = np.array([0, 0xE3069283], np.uint32)
    assert masked_crc32c(values).tolist() == [0xA282EAD8, masked_crc32c(0xE3069283)]


def example_records(count, seed=0):
    """Serialized pretraining examples, as data creation writes them."""
    rng = np.random.default_rng(seed)
    features = {
        k: rng.integers(0, 30000, (count, 128))
        for k in ("input_ids", "input_mask", "segment_ids", "token_boundary")
    }
    features.update(
        {k: rng.integers(0, 128, (count, 20)) for k in ("masked_lm_positions",)}
    )
    features["masked_lm_ids"] = rng.integers(0, 30000, (count, 20))
    features["masked_lm_weights"] = rng.random((count, 20)).astype(np.float32)
    features["next_sentence_labels"] = rng.integers(0, 2, count)
    return ExampleEncoder().encode(features)


def test_same_bytes_as_tensorflow_and_read_back(tmp_path):
    rng = np.random.default_rng(1)
    odd = [b"", b"x", bytes(8), rng.bytes(70_000)]
    batches = [example_records(300), odd, example_records(5, seed=2), []]
    ours, theirs = tmp_path / "ours.tfrecord", tmp_path / "tf.tfrecord"
    with TFRecordWriter(str(ours)) as writer:
        for batch in batches:
            writer.write_batch(batch)
        writer.write(b"last")
    records = [r for batch in batches for r in batch] + [b"last"]
    with tf.io.TFRecordWriter(str(theirs)) as writer:
        for record in records:
            writer.write(record)
    assert ours.read_bytes() == theirs.read_bytes()
    assert len(ours.read_bytes()) == sum(16 + len(r) for r in records)
    read = [r.numpy() for r in tf.data.TFRecordDataset(str(ours))]
    assert read == records


def test_a_failed_write_leaves_no_partial_shard(tmp_path):
    """`create-data` wrote each shard in place: a kill left a truncated
    `.tfrecord` under its final name, which `pretrain --records` then read.
    Now the file appears only when closed; an error keeps the old one."""
    path = tmp_path / "part-00000-of-00001.tfrecord"
    with TFRecordWriter(str(path)) as writer:
        writer.write(b"old")
        assert not path.exists()  # written beside it until closed
    with pytest.raises(RuntimeError):
        with TFRecordWriter(str(path)) as writer:
            writer.write_batch([b"new"] * 100)
            raise RuntimeError("killed")
    assert len(path.read_bytes()) == 16 + len(b"old")  # the old file, whole
    assert sorted(os.listdir(tmp_path)) == [path.name]  # no temporary left


def test_a_shard_left_half_written_is_not_read(tmp_path):
    """A killed `create-data` leaves its temporary, a hidden file that
    `tf.io.gfile.glob` matches (the shell does not): `--records` read it."""
    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset
    from albert_keras.pretraining.record_lengths import record_files

    name = "part-00000-of-00001.tfrecord"
    (tmp_path / f".{name}.tmp-7-{name}").write_bytes(b"half a record")
    pattern = str(tmp_path / "*.tfrecord")
    assert record_files(pattern) == []
    with pytest.raises(ValueError, match="No pretraining records match"):
        pretraining_dataset(pattern, 2, 8, 2)
    with TFRecordWriter(str(tmp_path / name)) as writer:
        writer.write(b"whole")
    assert record_files(pattern) == [str(tmp_path / name)]
