"""The name table covers every Keras weight of every model exactly once."""

import pytest

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertConfig,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
)
from checkpoints_convert import NAME_TABLE, ConversionError, official_weights
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import official_config

HEADS = {
    AlbertBackbone: set(),
    AlbertPretrainer: {
        "cls/predictions/transform/dense/kernel",
        "cls/predictions/transform/dense/bias",
        "cls/predictions/transform/LayerNorm/beta",
        "cls/predictions/transform/LayerNorm/gamma",
        "cls/predictions/output_bias",
        "cls/seq_relationship/output_weights",
        "cls/seq_relationship/output_bias",
    },
    AlbertClassifier: {"output_weights", "output_bias"},
    AlbertSpanQA: {"cls/squad/output_weights", "cls/squad/output_bias"},
    AlbertMultipleChoice: {"output_weights", "output_bias"},
}


def tiny(**changes):
    values = dict(
        vocab_size=50,
        embedding_size=8,
        hidden_size=16,
        num_hidden_layers=5,
        num_hidden_groups=2,
        inner_group_num=2,
        num_attention_heads=2,
        intermediate_size=24,
        max_position_embeddings=16,
    )
    return AlbertConfig(**{**values, **changes})


def build(cls, config):
    backbone = AlbertBackbone(config)
    return backbone if cls is AlbertBackbone else cls(backbone)


@pytest.mark.parametrize("cls", list(HEADS), ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "changes, groups",
    [
        ({}, ["group_0", "group_1"]),
        ({"embedding_size": 16}, ["group_0", "group_1"]),
        ({"sharing": "none"}, [f"group_{layer}" for layer in range(5)]),
    ],
    ids=["L5_G2_inner2", "E_equals_H", "sharing_none"],
)
def test_every_weight_exactly_once(cls, changes, groups):
    model = build(cls, tiny(**changes))
    entries = official_weights(model)
    names = [e.name for e in entries]
    assert len(names) == len(set(names))
    assert len(entries) == len(model.weights)  # and coverage is checked inside
    assert HEADS[cls] <= set(names)
    blocks = {n.split("/")[3] for n in names if "/transformer/" in n}
    assert sorted(blocks) == groups
    has_projection = "bert/encoder/embedding_hidden_mapping_in/kernel" in names
    assert has_projection == (model_config(model).embedding_size != 16)
    for entry in entries:
        expected = tuple(entry.variable.shape)
        if entry.row.transform is TRANSPOSE:
            expected = expected[::-1]
        assert len(entry.row.dims) == len(expected), entry.name


def model_config(model):
    return getattr(model, "backbone", model).config


def test_group_blocks_follow_the_official_formula():
    """group g's weights are the block its first layer (int(l / L * G) == g) runs."""
    backbone = AlbertBackbone(tiny())
    entries = {e.name: e.variable for e in official_weights(backbone)}
    name = "bert/encoder/transformer/group_1/inner_group_1/attention_1/self/key/kernel"
    # L=5, G=2: layers 0-2 use group 0, layers 3-4 group 1.
    assert entries[name] is backbone.encoder.block(3, 1).attention.key.kernel
    assert entries[name] is backbone.encoder.block(4, 1).attention.key.kernel


def test_table_rows_are_well_formed():
    heads = {row.part for row in NAME_TABLE}
    assert heads == {
        "embeddings",
        "projection",
        "encoder",
        "pooler",
        "mlm",
        "sop",
        "classifier",
        "span_qa",
        "squad_v2",
        "multiple_choice",
        "token_classifier",
    }
    for row in NAME_TABLE:
        assert ("{g}" in row.pattern) == (row.part == "encoder"), row.pattern
        assert ("{g}" in row.pattern) == (row.getter.scope == "block"), row.pattern


def test_sharing_none_official_config_has_one_group_per_layer():
    config = tiny(sharing="none", num_hidden_groups=1)
    official = official_config(config)
    assert official.num_hidden_groups == 5 and official.sharing == "none"
    assert official_config(tiny()) == tiny()


@pytest.mark.parametrize("sharing", ["attention", "ffn"])
def test_partial_sharing_cannot_be_expressed(sharing):
    with pytest.raises(ConversionError, match=f"sharing='{sharing}' cannot be"):
        official_weights(AlbertBackbone(tiny(sharing=sharing)))
