"""A row of the name table: an official name pattern, the getter of the Keras
weight behind it, and the transform between the two layouts.

No Keras here: `hf_names` and the transformers reader use `TRANSPOSE` without
loading the models.
"""

from __future__ import annotations

import dataclasses

import numpy as np


class Transpose:
    """Official [out, in] <-> Keras [in, out]: its own inverse, so both directions."""

    def __call__(self, value: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(value))

    def __repr__(self):
        return "TRANSPOSE"


TRANSPOSE = Transpose()


@dataclasses.dataclass(frozen=True)
class WeightGetter:
    """Finds a Keras variable: `path` of attributes from the backbone, the block
    of the row's group (for `{g}`/`{i}` rows) or the task model."""

    scope: str  # "backbone", "block" or "model"
    path: str

    def __call__(self, model, block=None):
        obj = {
            "backbone": getattr(model, "backbone", model),
            "block": block,
            "model": model,
        }[self.scope]
        for part in self.path.split("."):
            obj = getattr(obj, part)
        return obj


@dataclasses.dataclass(frozen=True)
class NameRow:
    """One row of the table.

    Args:
        pattern: official name; `{g}` and `{i}` for group and inner group.
        getter: `WeightGetter` of the Keras variable.
        transform: None or `TRANSPOSE` (official -> Keras, and back).
        dims: what decides each dimension of the official shape: a config
            field, or a task-model argument such as `num_classes`.
        part: the model part; heads are only in the task models that have them.
    """

    pattern: str
    getter: WeightGetter
    transform: Transpose | None
    dims: tuple[str, ...]
    part: str
