"""`SafetensorsFile`: read and write `.safetensors` with NumPy alone.

The format (huggingface/safetensors): 8 bytes little-endian header length N,
N bytes of JSON (`{name: {"dtype", "shape", "data_offsets": [begin, end]}}`
plus an optional `__metadata__` of strings), then the tensors' bytes, each
little-endian and C-ordered, offsets counted from the end of the header. The
format is simple enough that the converter needs neither the `safetensors`
package nor PyTorch to read a transformers checkpoint.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

from albert_keras.atomic_files import atomic_write
from checkpoints_convert.conversion_error import ConversionError

# safetensors dtype names -> NumPy; BF16 is read as uint16 and widened.
_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_NAMES = {np.dtype("<f8"): "F64", np.dtype("<f4"): "F32", np.dtype("<f2"): "F16"}
_MAX_HEADER = 100 * 1024 * 1024


class SafetensorsFile:
    """One `.safetensors` file: tensor names, shapes, and values as NumPy.

    The file is memory-mapped; `read` copies one tensor out. BF16 tensors are
    returned as float32 (exactly: bfloat16 is the top half of a float32).

    Args:
        path: the `.safetensors` file.

    Example:
    >>> import tempfile, os, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> SafetensorsFile.write(path, {"w": np.ones((2, 3), "float32")})
    >>> f = SafetensorsFile(path)
    >>> f.names, f.shape("w"), float(f.read("w").sum())
    (['w'], (2, 3), 6.0)
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        try:
            size = os.path.getsize(self.path)
            with open(self.path, "rb") as f:
                head = f.read(8)
                if len(head) < 8:
                    raise ValueError("shorter than the 8-byte header length")
                (length,) = struct.unpack("<Q", head)
                if length > min(_MAX_HEADER, size - 8):
                    raise ValueError(f"header length {length} does not fit the file")
                header = json.loads(f.read(length).decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise ConversionError(
                f"{self.path!r} is not a readable .safetensors file ({e}); is it "
                "a Git LFS pointer or a truncated download?"
            ) from None
        self.metadata = header.pop("__metadata__", None) or {}
        self._data_start = 8 + length
        self._entries = {}
        for name, entry in header.items():
            dtype = entry.get("dtype")
            if dtype not in _DTYPES:
                raise ConversionError(
                    f"{self.path!r}: tensor {name!r} has dtype {dtype!r}, which "
                    f"this reader does not know ({', '.join(_DTYPES)})."
                )
            begin, end = entry["data_offsets"]
            shape = tuple(int(d) for d in entry["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            if end - begin != count * _DTYPES[dtype].itemsize or (
                self._data_start + end > size
            ):
                raise ConversionError(
                    f"{self.path!r}: tensor {name!r} ({dtype} {list(shape)}) does "
                    "not match its byte range; the file is damaged or truncated."
                )
            self._entries[name] = (dtype, shape, begin)
        self._map = None

    @property
    def names(self) -> list[str]:
        return list(self._entries)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._entries[name][1]

    def dtype(self, name: str) -> str:
        return self._entries[name][0]

    def read(self, name: str) -> np.ndarray:
        """The tensor as a NumPy array (BF16 as float32)."""
        dtype, shape, begin = self._entries[name]
        if self._map is None:
            self._map = np.memmap(self.path, dtype=np.uint8, mode="r")
        count = int(np.prod(shape, dtype=np.int64))
        start = self._data_start + begin
        stop = start + count * _DTYPES[dtype].itemsize
        value = np.frombuffer(self._map[start:stop], dtype=_DTYPES[dtype]).copy()
        if dtype == "BF16":
            value = (value.astype(np.uint32) << 16).view(np.float32)
        return value.reshape(shape)

    @staticmethod
    def write(path, tensors: dict, metadata: dict | None = None) -> None:
        """Writes float tensors (F64/F32/F16) to `path`, in the given order.

        Args:
            path: the file to write.
            tensors: {name: array}; other dtypes raise `ConversionError`.
            metadata: optional {str: str}, e.g. {"format": "pt"}.
        """
        header = {}
        if metadata:
            header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
        arrays, offset = [], 0
        for name, value in tensors.items():
            array = np.ascontiguousarray(value)
            dtype = _NAMES.get(array.dtype.newbyteorder("<"))
            if dtype is None:
                raise ConversionError(
                    f"Cannot write {name!r} of dtype {array.dtype} to safetensors "
                    "(float64, float32 and float16 are written)."
                )
            array = array.astype(_DTYPES[dtype], copy=False)
            header[name] = {
                "dtype": dtype,
                "shape": list(array.shape),
                "data_offsets": [offset, offset + array.nbytes],
            }
            arrays.append(array)
            offset += array.nbytes
        encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
        encoded += b" " * (-len(encoded) % 8)  # tensors start 8-byte aligned
        with atomic_write(path, "wb") as f:
            f.write(struct.pack("<Q", len(encoded)))
            f.write(encoded)
            for array in arrays:
                f.write(array.tobytes())
