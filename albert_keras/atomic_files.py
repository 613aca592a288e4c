"""Files a run writes, written so that a kill or a full disk never leaves half of one.

Every writer here goes through the same steps: write a temporary file (or
folder) beside the target, flush it to disk (`fsync`), then `os.replace` it
over the target and sync the folder. A reader therefore sees either the old
complete file or the new complete file, never a 0-byte or half-written one; a
failed write leaves the old file in place and removes its temporary.

Tests inject faults by patching `_replace` (the rename) or the `save`
callable (the write itself).

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "state.json")
>>> with atomic_write(path) as f:
...     _ = f.write('{"epoch": 1}')
>>> open(path).read()
'{"epoch": 1}'
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil

TEMPORARY_MARK = ".tmp-"


def make_folder(folder: str, output: str) -> list[str]:
    """`os.makedirs(folder)` for the file or folder `output`; where it cannot
    (a file in the way, no permission), a ValueError that names both.
    Returns the folders it made, deepest first (for `remove_empty_folders`).

    >>> import tempfile
    >>> file = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> open(file, "w").close()
    >>> make_folder(os.path.join(file, "x"), "out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Cannot write 'out': its folder '...' cannot be created ...
    """
    made, path = [], os.path.abspath(folder)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        made.append(path)
        path = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise ValueError(
            f"Cannot write {str(output)!r}: its folder {str(folder)!r} cannot be "
            f"created ({e.strerror}). Give an output path in a writable folder."
        ) from None
    return made


def remove_empty_folders(folders: list[str]) -> None:
    """Removes the folders `make_folder` made, deepest first, while they are
    empty: a refused run leaves no empty output folder behind."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return  # not empty (or gone): keep it and the folders above


def temporary_path(path: str) -> str:
    """A hidden sibling of `path` that keeps its file name ending (`.keras`...)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}{TEMPORARY_MARK}{os.getpid()}-{name}")


def _replace(source: str, target: str) -> None:
    os.replace(source, target)


def _sync_folder(folder: str) -> None:
    """Makes a rename inside `folder` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sync_tree(path: str) -> None:
    """fsyncs a file, or every file under a folder."""
    files = [path]
    if os.path.isdir(path):
        files = [os.path.join(d, f) for d, _, names in os.walk(path) for f in names]
    for name in files:
        with open(name, "rb") as f:
            os.fsync(f.fileno())


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


@contextlib.contextmanager
def _temporary_then_rename(path: str):
    """Yields a temporary path beside `path`; what the body writes there is
    fsynced and renamed onto `path` when the body ends without an error.

    The steps every writer here shares. On any error (in the body, the sync or
    the rename) the temporary is removed, the old `path` is left as it was and
    the error is raised.
    """
    path = os.fspath(path)
    temporary = temporary_path(path)
    _remove(temporary)
    recover_folder(path)
    old = path + ".old"
    try:
        yield temporary
        _sync_tree(temporary)
        if os.path.isdir(temporary) and os.path.isdir(path):
            # Folders cannot be renamed over each other: move the old one
            # aside first; `recover_folder` puts it back after a kill here.
            _replace(path, old)
            _replace(temporary, path)
            _remove(old)
        else:
            _replace(temporary, path)
    except BaseException:
        _remove(temporary)
        recover_folder(path)
        raise
    _sync_folder(os.path.dirname(os.path.abspath(path)))


def save_atomically(path: str, save) -> str:
    """Runs `save(temporary)`, then puts the result at `path` in one rename.

    Args:
        path: the final file or folder (e.g. `best.keras`, `savedmodel`).
        save: callable(temporary_path) that writes the file or folder; the
            temporary path ends like `path` (Keras checks `.keras`,
            `.weights.h5`).

    Returns:
        `path`. If `save` or the rename fails, the temporary is removed, the
        old `path` is unchanged and the error is raised.
    """
    with _temporary_then_rename(path) as temporary:
        save(temporary)
    return path


def recover_folder(path: str) -> None:
    """Puts back `path` from `path.old` when a kill came between two renames."""
    old = path + ".old"
    if os.path.isdir(old):
        if os.path.isdir(path):
            _remove(old)
        else:
            os.replace(old, path)


@contextlib.contextmanager
def atomic_write(path: str, mode: str = "w", encoding: str | None = "utf-8", **kw):
    """`open(path, mode)` for writing, but the file appears only when complete.

    A failure in the body of the `with` (or in the write) removes the
    temporary and keeps the old file.

    Example:
    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> with atomic_write(p) as f:
    ...     _ = f.write("done")
    >>> open(p).read()
    'done'
    """
    if "b" in mode:
        encoding = None
    # The file is closed (flushed) before it is synced and renamed.
    with (
        _temporary_then_rename(path) as temporary,
        open(temporary, mode, encoding=encoding, **kw) as f,
    ):
        yield f


def copy_file(source: str, path: str) -> None:
    """Copies `source` to `path` atomically; nothing to do if they are one file."""
    if not (os.path.exists(path) and os.path.samefile(source, path)):
        save_atomically(path, lambda temporary: shutil.copy(source, temporary))


def write_json(path: str, value, **dump_options) -> None:
    """`json.dump(value)` to `path`, atomically, indented."""
    with atomic_write(path) as f:
        json.dump(value, f, indent=2, **dump_options)


def read_json(path: str, default=None):
    """The JSON at `path`, or `default` if there is no such file."""
    if not os.path.isfile(path):
        return default
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def remove_temporaries(folder: str) -> list[str]:
    """Removes what a killed write left in `folder`; returns the names removed."""
    if not os.path.isdir(folder):
        return []
    left = [n for n in os.listdir(folder) if TEMPORARY_MARK in n and n[0] == "."]
    for name in left:
        _remove(os.path.join(folder, name))
    return left
