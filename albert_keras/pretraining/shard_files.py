"""Output shards: their paths (`output_paths`), and records dealt to them.

`create_pretraining_data` writes each input file's records to a temporary
TFRecord file, then `merge_shards` deals them round-robin to the shards, as
the official writer deals instances to its output files.
"""

from __future__ import annotations

import contextlib
import glob
import os
import struct

from albert_keras.atomic_files import atomic_write


def output_paths(output: str, num_shards: int) -> list[str]:
    """Shard paths for `output`, a folder or a prefix.

    `DIR/part-00000-of-00004.tfrecord` for a folder (existing or ending in a
    separator), else `PREFIX-00000-of-00004.tfrecord`; a single shard named
    `*.tfrecord` is written to exactly that path.

    Args:
        output: folder, prefix or (one shard) file name.
        num_shards: how many files.

    Example:
    >>> output_paths("data/wiki", 2)
    ['data/wiki-00000-of-00002.tfrecord', 'data/wiki-00001-of-00002.tfrecord']
    >>> output_paths("data/train.tfrecord", 1)
    ['data/train.tfrecord']
    """
    if num_shards == 1 and output.endswith((".tfrecord", ".tfrecords")):
        return [output]
    if os.path.isdir(output) or output.endswith(("/", os.sep)):
        prefix = os.path.join(output, "part")
    else:
        prefix = output
    return [f"{prefix}-{i:05d}-of-{num_shards:05d}.tfrecord" for i in range(num_shards)]


def refuse_other_shards(output: str, outputs: list[str]) -> None:
    """Refuses an `output` that holds shards of another run with another count.

    A second run with another `--num-shards` (or number of input files)
    would leave the first run's shards beside its own, and a `--records`
    glob over the folder would read both.

    Example:
    >>> refuse_other_shards("new_folder/", output_paths("new_folder/", 2))
    """
    if not outputs or not outputs[0].endswith(f"-of-{len(outputs):05d}.tfrecord"):
        return  # a bad count is refused later; one named shard is replaced
    prefix = outputs[0][: -len("-00000-of-00000.tfrecord")]
    pattern = glob.escape(prefix) + "-[0-9][0-9][0-9][0-9][0-9]-of-[0-9]*.tfrecord"
    others = sorted(set(glob.glob(pattern)) - set(outputs))
    if others:
        names = ", ".join(os.path.basename(p) for p in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        raise ValueError(
            f"{output!r} already holds shards of another create-data run ({names}"
            f"{more}); new {len(outputs)}-shard output beside them would be read "
            "with them by a --records glob. Delete them or pass another --output."
        )


def merge_shards(temp_paths, outputs):
    """Deals the records of the per-file temporary TFRecords round-robin to shards.

    TFRecord frames (length, its CRC, data, its CRC) are copied as they are.
    Each shard is written to a temporary file and renamed once all are
    complete: a failure leaves no shard half written.
    """
    if len(temp_paths) == 1 and len(outputs) == 1:
        os.replace(temp_paths[0], outputs[0])
        return
    with contextlib.ExitStack() as stack:
        writers = [stack.enter_context(atomic_write(p, "wb")) for p in outputs]
        count = 0
        for path in temp_paths:
            with open(path, "rb") as f:
                while True:
                    header = f.read(12)
                    if not header:
                        break
                    (length,) = struct.unpack("<Q", header[:8])
                    writers[count % len(writers)].write(header + f.read(length + 4))
                    count += 1
            os.remove(path)  # dealt: the disk holds the records about once
