"""`ArrayCheckpoints`: model + optimizer state as `.npz` files, on any Keras backend."""

from __future__ import annotations

import os
import re

import keras
import numpy as np

from albert_keras.atomic_files import atomic_write, remove_temporaries

_NAME = re.compile(r"^ckpt-(\d+)\.npz$")


def _to_numpy(value) -> np.ndarray:
    """A variable's value on this host, whole (JAX arrays sharded over hosts too)."""
    if getattr(value, "is_fully_addressable", True):
        return keras.ops.convert_to_numpy(value)
    if value.is_fully_replicated:  # data parallel over hosts: every host has it
        return np.asarray(value.addressable_data(0))
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(value, tiled=True))


class ArrayCheckpoints:
    """Saves and restores every variable of a model and its optimizer.

    The backend-neutral checkpoint of `PretrainingCheckpoint` (JAX, torch, or
    TensorFlow absent): `ckpt-<step>.npz` files holding each variable by its
    path, written through a temporary then renamed (a kill never leaves half
    of one), the newest `keep` kept. Restoring assigns the values to the
    variables in place, so a model placed by a `keras.distribution` keeps its
    layout.

    Args:
        directory: where the files go.
        keep: how many files to keep, the newest.

    Example:
    >>> import tempfile
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> model.optimizer.build(model.trainable_variables)
    >>> store = ArrayCheckpoints(tempfile.mkdtemp(), keep=2)
    >>> path = store.save(model, step=5)
    >>> store.restore(model), os.path.basename(store.latest)
    (5, 'ckpt-5.npz')
    """

    def __init__(self, directory: str, keep: int = 3):
        if keep < 1:
            raise ValueError(f"`keep` must be >= 1. Received: keep={keep}")
        self.directory = directory
        self.keep = keep

    @staticmethod
    def _variables(model) -> dict:
        """{"model/<path>" or "optimizer/<path>": variable}, paths unique."""
        found = {}
        for prefix, variables in (
            ("model", model.variables),
            ("optimizer", model.optimizer.variables if model.optimizer else []),
        ):
            for variable in variables:
                found.setdefault(f"{prefix}/{variable.path}", variable)
        return found

    def steps(self) -> list[int]:
        """The steps saved here, oldest first."""
        if not os.path.isdir(self.directory):
            return []
        names = (_NAME.match(n) for n in os.listdir(self.directory))
        return sorted(int(m.group(1)) for m in names if m)

    @property
    def latest(self) -> str | None:
        """The newest checkpoint file, or None."""
        steps = self.steps()
        return self.path(steps[-1]) if steps else None

    def path(self, step: int) -> str:
        return os.path.join(self.directory, f"ckpt-{step}.npz")

    def save(self, model, step: int) -> str:
        """Writes `ckpt-<step>.npz` and removes all but the newest `keep`."""
        os.makedirs(self.directory, exist_ok=True)
        values = {k: _to_numpy(v.value) for k, v in self._variables(model).items()}
        path = self.path(step)
        with atomic_write(path, "wb") as f:
            np.savez(f, **values)
        for old in self.steps()[: -self.keep]:
            os.remove(self.path(old))
        return path

    def restore(self, model) -> int:
        """Assigns the newest checkpoint to `model`; returns its step (0: none)."""
        remove_temporaries(self.directory)
        path = self.latest
        if path is None:
            return 0
        variables = self._variables(model)
        with np.load(path) as saved:
            missing = sorted(set(variables) - set(saved.files))
            unknown = sorted(set(saved.files) - set(variables))
            if missing or unknown:
                raise ValueError(
                    f"{path} does not fit this model: missing {missing[:5]}, "
                    f"unknown {unknown[:5]}. It was saved by another model or "
                    "optimizer: resume with the run's own settings, or start a "
                    "new run in another --output-dir."
                )
            for key, variable in variables.items():
                variable.assign(saved[key])
        return int(_NAME.match(os.path.basename(path)).group(1))
