"""`RunLock`: one training run per output folder."""

from __future__ import annotations

import json
import os
import socket

import filelock

from albert_keras.atomic_files import write_json

# Folders this process holds: a run nested in another on the same folder (the
# CLI around `run_pretraining`) shares its lock.
_HELD: dict[str, int] = {}


class RunFolderBusy(RuntimeError):
    """Another live process holds the run folder."""


class RunLock:
    """An exclusive lock on a run folder, held for the whole run.

    The lock is `filelock`'s OS lock on `<folder>/.lock`: the operating system
    releases it when its process dies, however it dies. Beside it,
    `.lock.json` names the holder (PID, host, command); a second run on the
    folder refuses with those, and a run that finds the record of a holder
    that is gone (killed) takes the folder over and says so.

    Args:
        folder: the run's output folder (created if missing).
        what: the run's name in messages, e.g. "albert-keras pretrain".

    Example:
    >>> import tempfile
    >>> with RunLock(tempfile.mkdtemp()) as lock:
    ...     lock.held
    True
    """

    def __init__(self, folder: str, what: str = "a run"):
        self.folder = folder
        self.what = what
        self.taken_over = None  # the record of a killed holder, if any
        self._key = os.path.realpath(folder)
        self._nested = False
        self._made = False  # the folder was made by this lock
        self._lock = filelock.FileLock(os.path.join(folder, ".lock"), timeout=0)

    @property
    def held(self) -> bool:
        return self._nested or self._lock.is_locked

    @property
    def _record_path(self) -> str:
        return os.path.join(self.folder, ".lock.json")

    def _holder(self) -> dict:
        try:
            with open(self._record_path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def acquire(self) -> RunLock:
        """Takes the lock or raises `RunFolderBusy` naming the holder."""
        try:
            self._made = self._made or not os.path.isdir(self.folder)
            os.makedirs(self.folder, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ValueError(
                f"The output folder {self.folder!r} cannot be made: it, or a "
                "folder above it, is a file. Pass another output folder "
                "(--output-dir), or move the file away."
            ) from None
        if _HELD.get(self._key):
            _HELD[self._key] += 1
            self._nested = True
            return self
        try:
            self._lock.acquire()
        except filelock.Timeout:
            holder = self._holder()
            raise RunFolderBusy(
                f"{self.folder} is in use by another run (PID "
                f"{holder.get('pid', '?')} on {holder.get('host', '?')}, "
                f"{holder.get('what', 'unknown')}). Wait for it to finish, or "
                "choose another output folder."
            ) from None
        earlier = self._holder()
        if earlier:
            self.taken_over = earlier
            print(
                f"Took over {self.folder} from {earlier.get('what', 'a run')} "
                f"(PID {earlier.get('pid', '?')} on {earlier.get('host', '?')}) "
                "that ended without releasing it (killed?).",
                flush=True,
            )
        write_json(
            self._record_path,
            {"pid": os.getpid(), "host": socket.gethostname(), "what": self.what},
        )
        _HELD[self._key] = 1
        return self

    def release(self) -> None:
        if self._nested:
            _HELD[self._key] -= 1
            self._nested = False
            return
        if self.held:
            _HELD.pop(self._key, None)
            try:
                os.remove(self._record_path)
            except OSError:
                pass
            self._lock.release()
            self._remove_if_unused()

    def _remove_if_unused(self) -> None:
        """A folder this lock made and the run never wrote to goes again: a
        run refused before its first file (a misspelt input) leaves nothing."""
        try:
            if self._made and set(os.listdir(self.folder)) <= {".lock"}:
                if os.path.exists(self._lock.lock_file):
                    os.remove(self._lock.lock_file)
                os.rmdir(self.folder)
        except OSError:
            pass  # another process came in, or the folder went: keep it

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
