"""The name table: official TF1 checkpoint names <-> our Keras weights.

Each row of `NAME_TABLE` is one official variable name pattern (`{g}` is the
group, `{i}` the inner group), the getter of the Keras variable that holds it,
the transform between the two layouts (None, or `TRANSPOSE` for heads the
official code stores [out, in] where our `Dense` kernels are [in, out]), the
config field behind each official dimension (for error messages), and the part
of the model it belongs to. `official_weights` expands the table for one model;
the loader and the writer both use it, so they cannot disagree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
)
from checkpoints_convert.conversion_error import ConversionError


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


def _backbone(path):
    return WeightGetter("backbone", path)


def _block(path):
    return WeightGetter("block", path)


def _head(path):
    return WeightGetter("model", path)


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


_BLOCK = "bert/encoder/transformer/group_{g}/inner_group_{i}/"
_H, _E, _I = "hidden_size", "embedding_size", "intermediate_size"

NAME_TABLE: tuple[NameRow, ...] = tuple(
    NameRow(*row)
    for row in [
        # official name pattern, Keras weight, transform, official dims, part
        (
            "bert/embeddings/word_embeddings",
            _backbone("embeddings.word_embeddings"),
            None,
            ("vocab_size", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/token_type_embeddings",
            _backbone("embeddings.token_type_embeddings"),
            None,
            ("type_vocab_size", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/position_embeddings",
            _backbone("embeddings.position_embeddings"),
            None,
            ("max_position_embeddings", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/LayerNorm/beta",
            _backbone("embeddings.layer_norm.beta"),
            None,
            (_E,),
            "embeddings",
        ),
        (
            "bert/embeddings/LayerNorm/gamma",
            _backbone("embeddings.layer_norm.gamma"),
            None,
            (_E,),
            "embeddings",
        ),
        # Only when embedding_size != hidden_size.
        (
            "bert/encoder/embedding_hidden_mapping_in/kernel",
            _backbone("embeddings.projection.kernel"),
            None,
            (_E, _H),
            "projection",
        ),
        (
            "bert/encoder/embedding_hidden_mapping_in/bias",
            _backbone("embeddings.projection.bias"),
            None,
            (_H,),
            "projection",
        ),
        (
            _BLOCK + "attention_1/self/query/kernel",
            _block("attention.query.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/query/bias",
            _block("attention.query.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/key/kernel",
            _block("attention.key.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/key/bias",
            _block("attention.key.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/value/kernel",
            _block("attention.value.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/value/bias",
            _block("attention.value.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/output/dense/kernel",
            _block("attention.output_dense.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/output/dense/bias",
            _block("attention.output_dense.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm/beta",
            _block("attention.layer_norm.beta"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm/gamma",
            _block("attention.layer_norm.gamma"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/dense/kernel",
            _block("feed_forward.intermediate.kernel"),
            None,
            (_H, _I),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/dense/bias",
            _block("feed_forward.intermediate.bias"),
            None,
            (_I,),
            "encoder",
        ),
        # The official code nests the FFN output under `intermediate/`.
        (
            _BLOCK + "ffn_1/intermediate/output/dense/kernel",
            _block("feed_forward.output_dense.kernel"),
            None,
            (_I, _H),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/output/dense/bias",
            _block("feed_forward.output_dense.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm_1/beta",
            _block("feed_forward.layer_norm.beta"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm_1/gamma",
            _block("feed_forward.layer_norm.gamma"),
            None,
            (_H,),
            "encoder",
        ),
        (
            "bert/pooler/dense/kernel",
            _backbone("pooler.kernel"),
            None,
            (_H, _H),
            "pooler",
        ),
        ("bert/pooler/dense/bias", _backbone("pooler.bias"), None, (_H,), "pooler"),
        # Pretraining heads. The MLM decoder is the word embedding, transposed
        # in the graph, so it has no row of its own.
        (
            "cls/predictions/transform/dense/kernel",
            _head("mlm_head.dense.kernel"),
            None,
            (_H, _E),
            "mlm",
        ),
        (
            "cls/predictions/transform/dense/bias",
            _head("mlm_head.dense.bias"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/transform/LayerNorm/beta",
            _head("mlm_head.layer_norm.beta"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/transform/LayerNorm/gamma",
            _head("mlm_head.layer_norm.gamma"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/output_bias",
            _head("mlm_head.output_bias"),
            None,
            ("vocab_size",),
            "mlm",
        ),
        # SentenceOrderHead keeps the official [2, H] layout: no transform.
        (
            "cls/seq_relationship/output_weights",
            _head("sop_head.output_weights"),
            None,
            ("sop_classes", _H),
            "sop",
        ),
        (
            "cls/seq_relationship/output_bias",
            _head("sop_head.output_bias"),
            None,
            ("sop_classes",),
            "sop",
        ),
        # run_classifier: root variables, logits = pooled @ W^T + b.
        (
            "output_weights",
            _head("classifier.kernel"),
            TRANSPOSE,
            ("num_classes", _H),
            "classifier",
        ),
        (
            "output_bias",
            _head("classifier.bias"),
            None,
            ("num_classes",),
            "classifier",
        ),
        # run_squad v1: start and end logits from one [2, H] matrix.
        (
            "cls/squad/output_weights",
            _head("span_head.kernel"),
            TRANSPOSE,
            ("span_outputs", _H),
            "span_qa",
        ),
        (
            "cls/squad/output_bias",
            _head("span_head.bias"),
            None,
            ("span_outputs",),
            "span_qa",
        ),
        # run_squad v2 (squad_utils.create_v2_model): tf.layers.dense kernels
        # are [in, out], the Keras layout.
        (
            "start_logits/dense/kernel",
            _head("squad_v2_head.start_dense.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        (
            "start_logits/dense/bias",
            _head("squad_v2_head.start_dense.bias"),
            None,
            ("squad_v2_score",),
            "squad_v2",
        ),
        (
            "end_logits/dense_0/kernel",
            _head("squad_v2_head.end_dense_0.kernel"),
            None,
            ("squad_v2_concat", _H),
            "squad_v2",
        ),
        (
            "end_logits/dense_0/bias",
            _head("squad_v2_head.end_dense_0.bias"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/LayerNorm/beta",
            _head("squad_v2_head.end_layer_norm.beta"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/LayerNorm/gamma",
            _head("squad_v2_head.end_layer_norm.gamma"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/dense_1/kernel",
            _head("squad_v2_head.end_dense_1.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        (
            "end_logits/dense_1/bias",
            _head("squad_v2_head.end_dense_1.bias"),
            None,
            ("squad_v2_score",),
            "squad_v2",
        ),
        (
            "answer_class/dense_0/kernel",
            _head("squad_v2_head.answer_dense_0.kernel"),
            None,
            ("squad_v2_concat", _H),
            "squad_v2",
        ),
        (
            "answer_class/dense_0/bias",
            _head("squad_v2_head.answer_dense_0.bias"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "answer_class/dense_1/kernel",
            _head("squad_v2_head.answer_dense_1.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        # run_race: the same root names as run_classifier, one score per choice.
        (
            "output_weights",
            _head("choice_head.kernel"),
            TRANSPOSE,
            ("choice_outputs", _H),
            "multiple_choice",
        ),
        (
            "output_bias",
            _head("choice_head.bias"),
            None,
            ("choice_outputs",),
            "multiple_choice",
        ),
    ]
)

# The heads each task model has, in NAME_TABLE's `part` names.
MODEL_HEADS: dict[type, tuple[str, ...]] = {
    AlbertPretrainer: ("mlm", "sop"),
    AlbertClassifier: ("classifier",),
    AlbertSpanQA: ("span_qa",),
    AlbertSquadV2: ("squad_v2",),
    AlbertMultipleChoice: ("multiple_choice",),
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
