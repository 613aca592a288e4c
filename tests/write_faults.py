"""Fault injection for writers: the k-th file opened for writing fails.

`failing_file_writes(monkeypatch, folder, at)` makes the first `write` of the
`at`-th file opened for writing under `folder` write half its data and raise
`OSError(ENOSPC)`, as a full disk does. `check_each_write_can_fail` runs a
writer once per such fault and checks that no file is ever left half
written: after a fault on an empty folder every file is complete or absent,
after a fault on a complete folder every file is still complete, and a
rerun writes the same bytes as a run without faults.
"""

from __future__ import annotations

import builtins
import errno
import io
import os

import pytest


class _FailingFile:
    """A file whose first `write` writes half and raises ENOSPC."""

    def __init__(self, file):
        self._file = file

    def write(self, data):
        self._file.write(data[: len(data) // 2])
        self._file.flush()
        raise OSError(errno.ENOSPC, "No space left on device (injected)")

    def fileno(self):  # no OS-level copy (sendfile) around `write`
        raise io.UnsupportedOperation("fileno")

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()
        return False


def failing_file_writes(monkeypatch, folder, at=None) -> list[str]:
    """Patches `open`; returns the list of paths opened for writing under
    `folder` (filled as the writer runs). `at` None: nothing fails."""
    real_open = builtins.open
    root = os.path.abspath(folder) + os.sep
    opened = []

    def open_for_test(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        path = os.path.abspath(file) if isinstance(file, (str, os.PathLike)) else ""
        if path.startswith(root) and any(c in mode for c in "wax+"):
            opened.append(path)
            if len(opened) == at:
                return _FailingFile(handle)
        return handle

    monkeypatch.setattr(builtins, "open", open_for_test)
    return opened


def files_in(folder) -> dict[str, bytes]:
    """{relative path: bytes} of every file under `folder`."""
    found = {}
    for parent, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(parent, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def check_each_write_can_fail(monkeypatch, tmp_path, write) -> int:
    """Runs `write(folder)` with a fault at each file it writes, in turn.

    Returns the number of files written through Python (each failed once).
    """
    reference = str(tmp_path / "reference")
    with monkeypatch.context() as patch:
        opened = failing_file_writes(patch, tmp_path)
        write(reference)
    expected = files_in(reference)
    assert expected and opened, "the writer wrote nothing through Python"
    out = str(tmp_path / "out")
    for at in range(1, len(opened) + 1):
        with monkeypatch.context() as patch:
            failing_file_writes(patch, out, at)
            with pytest.raises(OSError, match="injected"):
                write(out)
        left = files_in(out)
        for name, data in left.items():
            assert data == expected.get(name), f"fault at file {at}: {name} is partial"
        if at > 1:  # the folder was complete before this fault: it still is
            assert left.keys() == expected.keys(), f"fault at file {at}"
        write(out)
        assert files_in(out) == expected, f"rerun after the fault at file {at}"
    return len(opened)
