"""The official layout of one model: the name table expanded for it.

`official_weights(model)` lists every official variable a backbone or task
model holds, with its Keras variable; `official_groups` and `official_config`
say how the official code groups its layers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
    AlbertTokenClassifier,
)
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.name_row import NameRow
from checkpoints_convert.name_table import NAME_TABLE

# The heads each task model has, in NAME_TABLE's `part` names.
MODEL_HEADS: dict[type, tuple[str, ...]] = {
    AlbertPretrainer: ("mlm", "sop"),
    AlbertClassifier: ("classifier",),
    AlbertSpanQA: ("span_qa",),
    AlbertSquadV2: ("squad_v2",),
    AlbertMultipleChoice: ("multiple_choice",),
    AlbertTokenClassifier: ("token_classifier",),
    AlbertBackbone: (),
}


@dataclasses.dataclass(frozen=True)
class TableEntry:
    """One official variable of one model: its name, Keras variable and row."""

    name: str
    variable: Any
    row: NameRow


def backbone_of(model, caller: str):
    """The `AlbertBackbone` of a backbone or task model; ConversionError otherwise."""
    backbone = getattr(model, "backbone", model)
    if not hasattr(backbone, "config"):
        raise ConversionError(
            f"{caller} takes an AlbertBackbone or an albert_keras task model. "
            f"Received: {type(model).__name__}"
        )
    return backbone


def model_heads(model) -> tuple[str, ...]:
    """The head parts (`NameRow.part`) of a backbone or task model."""
    for cls, heads in MODEL_HEADS.items():
        if isinstance(model, cls):
            return heads
    raise ConversionError(
        f"No official checkpoint layout for {type(model).__name__}. Supported: "
        + ", ".join(cls.__name__ for cls in MODEL_HEADS)
    )


def official_groups(config: AlbertConfig) -> list[tuple[int, int]]:
    """(official group, first layer using it) for every group with variables.

    The official code creates a group's variables where a layer first uses
    it, layer `l` using group `int(l / L * G)`. `sharing="none"` is the
    official layout with G = L, which holds only when that float formula
    gives every layer its own group.
    """
    layers = config.num_hidden_layers
    if config.sharing == "all":
        groups = {}
        for layer in range(layers):
            groups.setdefault(config.group_index(layer), layer)
        return sorted(groups.items())
    if config.sharing == "none":
        official = [int(layer / layers * layers) for layer in range(layers)]
        if official != list(range(layers)):
            raise ConversionError(
                f"sharing='none' with num_hidden_layers={layers} has no official "
                "layout: the official group formula int(l / L * G) with G = L "
                "gives two layers one group."
            )
        return [(layer, layer) for layer in range(layers)]
    raise ConversionError(
        f"sharing={config.sharing!r} cannot be expressed in the official "
        "checkpoint format, which shares whole attention + FFN blocks by group "
        "(group_{g}/inner_group_{i}); only sharing='all' and sharing='none' "
        "(one group per layer) can. Keep such a model as a .keras file."
    )


def official_config(config: AlbertConfig) -> AlbertConfig:
    """The config as the official code must read it beside our checkpoint.

    `sharing="none"` becomes num_hidden_groups = num_hidden_layers (the
    official code has no `sharing`; the key is kept, and ignored there, so our
    loader rebuilds the same model).
    """
    official_groups(config)  # raises for layouts the official code lacks
    if config.sharing == "none":
        return config.replace(num_hidden_groups=config.num_hidden_layers)
    return config


def official_weights(model) -> list[TableEntry]:
    """The name table expanded for one model: every official variable it holds.

    Checks that every Keras weight of the model appears exactly once, so a
    model with a weight the table does not know cannot be half converted.

    Args:
        model: an `AlbertBackbone` or a task model over one.

    Returns:
        A list of `TableEntry` in table order, blocks group by group.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> entries = official_weights(AlbertBackbone("albert_tiny"))
    >>> entries[0].name
    'bert/embeddings/word_embeddings'
    """
    backbone = getattr(model, "backbone", model)
    config = backbone.config
    parts = {"embeddings", "encoder", "pooler", *model_heads(model)}
    if backbone.embeddings.projection is not None:
        parts.add("projection")
    groups = official_groups(config)
    rows = [row for row in NAME_TABLE if row.part in parts]
    block_rows = [row for row in rows if "{g}" in row.pattern]
    entries = []
    for row in rows:
        if row is block_rows[0]:
            for group, layer in groups:
                for inner in range(config.inner_group_num):
                    block = backbone.encoder.block(layer, inner)
                    for block_row in block_rows:
                        name = block_row.pattern.format(g=group, i=inner)
                        variable = block_row.getter(model, block)
                        entries.append(TableEntry(name, variable, block_row))
        elif "{g}" not in row.pattern:
            entries.append(TableEntry(row.pattern, row.getter(model), row))
    _check_coverage(model, entries)
    return entries


def _check_coverage(model, entries):
    """Every Keras weight exactly once: a new weight must get a table row."""
    seen = {}
    for entry in entries:
        key = id(entry.variable)
        if key in seen:
            raise ConversionError(
                f"{entry.name!r} and {seen[key]!r} map to the same Keras weight "
                f"{entry.variable.path!r}; the name table is wrong for this model."
            )
        seen[key] = entry.name
    unmapped = [w.path for w in model.weights if id(w) not in seen]
    if unmapped:
        raise ConversionError(
            f"{type(model).__name__} has weights with no official name: "
            f"{unmapped}. Add rows for them to checkpoints_convert/name_table.py."
        )
