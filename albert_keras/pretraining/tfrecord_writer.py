"""`TFRecordWriter`: TFRecord files without TensorFlow, checksums in NumPy.

A TFRecord file is a run of frames: the data's length (uint64, little
endian), the masked CRC-32C of those 8 bytes, the data, the masked CRC-32C
of the data. CRC-32C (Castagnoli, the iSCSI checksum) is not in Python's
standard library, and a byte at a time in Python it would cost more than
building the records; here it runs in NumPy over a batch of records at once
(slice-by-8 tables, every record advancing 8 bytes a step), so data creation
writes the same bytes as `tf.io.TFRecordWriter` without importing
TensorFlow.
"""

from __future__ import annotations

import contextlib

import numpy as np

from albert_keras.atomic_files import atomic_write

_POLYNOMIAL = 0x82F63B78  # Castagnoli, bit-reversed
_MASK_DELTA = 0xA282EAD8


def _slice_by_8_tables() -> np.ndarray:
    """T[k][b]: the register change of byte b followed by k zero bytes."""
    crc = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        crc = np.where(crc & 1, (crc >> 1) ^ np.uint32(_POLYNOMIAL), crc >> 1)
    tables = [crc.astype(np.uint32)]
    for _ in range(7):
        tables.append((tables[-1] >> 8) ^ tables[0][tables[-1] & 0xFF])
    return np.stack(tables)


_TABLES = _slice_by_8_tables()
# Byte j of an 8-byte step goes through table 7 - j; one flat table so a
# step is a single gather.
_STEP_TABLE = _TABLES[::-1].reshape(-1)
_STEP_OFFSETS = (np.arange(8, dtype=np.intp) * 256)[:, None]
# _ZERO_RUNS[n]: the register after n zero bytes from the initial 0xFFFFFFFF
# (grown on demand).
_ZERO_RUNS = np.full(1, 0xFFFFFFFF, np.uint32)


def _zero_runs(longest: int) -> np.ndarray:
    global _ZERO_RUNS
    if len(_ZERO_RUNS) <= longest:
        table = _TABLES[0].tolist()
        runs = _ZERO_RUNS.tolist()
        crc = runs[-1]
        for _ in range(max(longest + 1, 2 * len(runs)) - len(runs)):
            crc = table[crc & 0xFF] ^ (crc >> 8)
            runs.append(crc)
        _ZERO_RUNS = np.array(runs, np.uint32)
    return _ZERO_RUNS


def crc32c_batch(records) -> np.ndarray:
    """CRC-32C of each bytes object, computed for all of them at once.

    The records are right-aligned in a zero-padded matrix: from a zero
    register, leading zero bytes leave it zero, and since the CRC is linear
    the initial 0xFFFFFFFF is added back per length (`_zero_runs`). So every
    record takes the same 8-byte steps, with no per-record masks. Cost: one
    step per 8 bytes of the longest record, each over all records; meant
    for batches of records of similar size (a single megabyte record
    takes about a second).

    Args:
        records: a list of bytes.

    Returns: uint32 array, one checksum per record.

    Example:
    >>> [hex(c) for c in crc32c_batch([b"123456789", bytes(32)])]
    ['0xe3069283', '0x8a9136aa']
    """
    count = len(records)
    if not count:
        return np.zeros(0, np.uint32)
    lengths = np.fromiter(map(len, records), np.int64, count)
    width = max(8, -(-int(lengths.max()) // 8) * 8)
    zeros = bytes(width)
    parts = []
    for record, length in zip(records, lengths.tolist(), strict=True):
        parts.append(zeros[: width - length])
        parts.append(record)
    data = np.frombuffer(b"".join(parts), np.uint8).reshape(count, width)
    # [steps, 8, records]: each step's 8 bytes of every record, contiguous.
    steps = np.ascontiguousarray(data.T).reshape(width // 8, 8, count)
    crc = np.zeros(count, np.uint32)
    for step in steps:
        index = step.astype(np.intp)
        index[:4] ^= crc.view(np.uint8).reshape(count, 4).T
        crc = np.bitwise_xor.reduce(_STEP_TABLE[index + _STEP_OFFSETS], axis=0)
    return crc ^ _zero_runs(int(lengths.max()))[lengths] ^ np.uint32(0xFFFFFFFF)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of `data`, as `tf.io` and iSCSI compute it.

    Example:
    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    return int(crc32c_batch([bytes(data)])[0])


def masked_crc32c(crcs):
    """The TFRecord mask of CRC-32C values: rotate right by 15, add a constant.

    Args:
        crcs: an int or a uint32 array.

    Example:
    >>> hex(masked_crc32c(crc32c(b"")))
    '0xa282ead8'
    """
    value = np.asarray(crcs, np.uint64)
    rotated = ((value >> 15) | (value << 17)) & 0xFFFFFFFF
    masked = ((rotated + _MASK_DELTA) & 0xFFFFFFFF).astype(np.uint32)
    return int(masked) if masked.ndim == 0 else masked


class TFRecordWriter:
    """Writes records to a TFRecord file, byte for byte as `tf.io.TFRecordWriter`.

    Uncompressed, like TensorFlow's default; `tf.data.TFRecordDataset` and
    any TFRecord reader read the file. Batches are the fast way in
    (`write_batch`): their checksums are computed together.

    Args:
        path: the file to write (replaced if it exists), through a temporary
            beside it that `close` renames onto it.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> with TFRecordWriter(path) as writer:
    ...     writer.write_batch([b"first", b"second"])
    ...     writer.write(b"third")
    >>> os.path.getsize(path)  # 3 frames of 16 bytes + 16 bytes of data
    64
    """

    def __init__(self, path: str):
        self.path = path
        # A temporary beside `path`, renamed onto it by `close`: a killed
        # `create-data` leaves no truncated shard that `--records` would read.
        self._stack = contextlib.ExitStack()
        self._file = self._stack.enter_context(atomic_write(path, "wb"))

    def write(self, record: bytes) -> None:
        """Appends one record."""
        self.write_batch([record])

    def write_batch(self, records) -> None:
        """Appends records (a list of bytes), in order."""
        if not len(records):
            return
        lengths = np.fromiter(map(len, records), np.uint64, len(records))
        headers = np.zeros((len(records), 12), np.uint8)
        headers[:, :8] = lengths.astype("<u8").view(np.uint8).reshape(-1, 8)
        length_crcs = crc32c_batch([row.tobytes() for row in headers[:, :8]])
        masked = masked_crc32c(length_crcs).astype("<u4")
        headers[:, 8:] = masked.view(np.uint8).reshape(-1, 4)
        footers = masked_crc32c(crc32c_batch(records)).astype("<u4").tobytes()
        headers = headers.tobytes()
        parts = []
        for i, record in enumerate(records):
            parts.append(headers[12 * i : 12 * i + 12])
            parts.append(record)
            parts.append(footers[4 * i : 4 * i + 4])
        self._file.write(b"".join(parts))

    def close(self) -> None:
        """Flushes and closes the file, and puts it in place at `path`."""
        self._stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # On an error the temporary is removed and `path` left as it was.
        self._stack.__exit__(*exc)
