"""The settings a run was started with, and the check a restart makes against them."""

from __future__ import annotations

import hashlib
import json
import os
import re

from albert_keras.atomic_files import read_json, write_json

SETTINGS_FILE = "run_settings.json"
# Written last by a fine-tuning or pretraining run: it finished, files and all.
RUN_STATE = "run_state.json"


class SettingsChanged(ValueError):
    """A restart would resume a run with different training settings."""


def file_fingerprint(source) -> str | None:
    """SHA-256 of a file's bytes (of its JSON for in-memory data); None for None.

    Example:
    >>> file_fingerprint([{"text": "a", "label": 0}])[:12]
    '12d661867a14'
    """
    if source is None:
        return None
    digest = hashlib.sha256()
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        with open(source, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    else:
        digest.update(json.dumps(source, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def check_run_settings(
    folder: str,
    settings: dict,
    force_resume: bool = False,
    start_over: str | None = "--overwrite",
    record: bool = True,
) -> list[str]:
    """Records `settings` for a new run; compares them on a restart.

    Args:
        folder: the run folder; the settings go to `run_settings.json` in it.
        settings: plain-JSON values that change the training (batch size,
            sequence length, seed, steps or epochs, learning rate, data
            fingerprints).
        force_resume: resume even if they differ (the new ones are recorded).
        start_over: the flag that starts over in the folder, named in the
            refusal (None: there is none).
        record: write them now; False leaves it to `record_run_settings`,
            once the run has really started (a run refused for bad input
            then leaves nothing that blocks the corrected command).

    Returns:
        The settings that differ, as "name: then, now" (empty if none).

    Raises:
        SettingsChanged: naming each setting that differs, with both values,
            unless `force_resume`.

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> check_run_settings(folder, {"seed": 1})
    []
    >>> check_run_settings(folder, {"seed": 2})
    Traceback (most recent call last):
    ...
    albert_keras.training.run_settings.SettingsChanged: ...
    """
    recorded = read_json(os.path.join(folder, SETTINGS_FILE))
    settings = _plain_json(settings)
    changes = []
    if recorded is not None and recorded != settings:
        changes = _changes(recorded, settings)
        if not force_resume:
            raise SettingsChanged(
                f"{folder} holds a run started with other settings "
                f"({'; '.join(changes)}). Resuming would mix two trainings. "
                "Use the same settings, another output folder, "
                + (f"{start_over} to start over, " if start_over else "")
                + "or --force-resume to go on anyway."
            )
        print(f"--force-resume: going on with {'; '.join(changes)}", flush=True)
    if record:
        record_run_settings(folder, settings)
    return changes


def record_run_settings(folder: str, settings: dict) -> None:
    """Writes `settings` as the run's (`check_run_settings` compares with them).

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> record_run_settings(folder, {"seed": 1})
    >>> check_run_settings(folder, {"seed": 1}, record=False)
    []
    """
    path = os.path.join(folder, SETTINGS_FILE)
    settings = _plain_json(settings)
    if read_json(path) != settings:
        write_json(path, settings)


def describe_change(key, then, now) -> str:
    """ "seed: 1 then, 2 now"; for a file fingerprint, that its bytes changed.

    A value left unset (None: `--learning-rate auto`, no `--max-*-examples`)
    reads "the default", not "None".

    Example:
    >>> describe_change("train", "a" * 64, "b" * 64)
    'train: other contents (SHA-256 aaaaaaaa then, bbbbbbbb now)'
    >>> describe_change("learning_rate", None, 0.001)
    'learning_rate: the default then, 0.001 now'
    """
    fingerprints = [v for v in (then, now) if isinstance(v, str) and _SHA256(v)]
    if len(fingerprints) == 2:
        return f"{key}: other contents (SHA-256 {then[:8]} then, {now[:8]} now)"
    then, now = ("the default" if v is None else repr(v) for v in (then, now))
    return f"{key}: {then} then, {now} now"


def _changes(then: dict, now: dict, prefix: str = "") -> list[str]:
    """Each differing value, "task.config.sequence_length: 16 then, 32 now":
    nested settings (a task's config) by the key that changed, not whole."""
    changes = []
    for key in sorted(set(then) | set(now)):
        a, b = then.get(key), now.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            changes += _changes(a, b, f"{prefix}{key}.")
        else:
            changes.append(describe_change(prefix + key, a, b))
    return changes


_SHA256 = re.compile(r"[0-9a-f]{64}").fullmatch


def _plain_json(settings: dict) -> dict:
    """`settings` as JSON reads them back (tuples as lists, objects as text)."""
    return json.loads(json.dumps(settings, default=str))
