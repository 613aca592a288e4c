"""Parameter counts: official variable sizes per preset, and the paper's Tables 3-4."""

import keras
import pytest

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.presets import PRESETS


def official_variable_shapes(config: AlbertConfig, heads=True):
    """Shapes of the variables an official checkpoint of `config` holds.

    Written from the official variable list (ALBERT_FACTS.md), independently of
    our layers: one entry per group and inner group actually used.
    """
    v, e, h, i = (
        config.vocab_size,
        config.embedding_size,
        config.hidden_size,
        config.intermediate_size,
    )
    shapes = {
        "bert/embeddings/word_embeddings": (v, e),
        "bert/embeddings/token_type_embeddings": (config.type_vocab_size, e),
        "bert/embeddings/position_embeddings": (config.max_position_embeddings, e),
        "bert/embeddings/LayerNorm/beta": (e,),
        "bert/embeddings/LayerNorm/gamma": (e,),
        "bert/pooler/dense/kernel": (h, h),
        "bert/pooler/dense/bias": (h,),
    }
    if e != h:
        shapes["bert/encoder/embedding_hidden_mapping_in/kernel"] = (e, h)
        shapes["bert/encoder/embedding_hidden_mapping_in/bias"] = (h,)
    layers = config.num_hidden_layers
    groups = {int(n / layers * config.num_hidden_groups) for n in range(layers)}
    for g in groups:
        for inner in range(config.inner_group_num):
            p = f"bert/encoder/transformer/group_{g}/inner_group_{inner}/"
            for name in ("query", "key", "value"):
                shapes[p + f"attention_1/self/{name}/kernel"] = (h, h)
                shapes[p + f"attention_1/self/{name}/bias"] = (h,)
            shapes[p + "attention_1/output/dense/kernel"] = (h, h)
            shapes[p + "attention_1/output/dense/bias"] = (h,)
            shapes[p + "ffn_1/intermediate/dense/kernel"] = (h, i)
            shapes[p + "ffn_1/intermediate/dense/bias"] = (i,)
            shapes[p + "ffn_1/intermediate/output/dense/kernel"] = (i, h)
            shapes[p + "ffn_1/intermediate/output/dense/bias"] = (h,)
            for ln in ("LayerNorm", "LayerNorm_1"):
                shapes[p + f"{ln}/beta"] = (h,)
                shapes[p + f"{ln}/gamma"] = (h,)
    if heads:
        shapes["cls/predictions/transform/dense/kernel"] = (h, e)
        shapes["cls/predictions/transform/dense/bias"] = (e,)
        shapes["cls/predictions/transform/LayerNorm/beta"] = (e,)
        shapes["cls/predictions/transform/LayerNorm/gamma"] = (e,)
        shapes["cls/predictions/output_bias"] = (v,)
        shapes["cls/seq_relationship/output_weights"] = (2, h)
        shapes["cls/seq_relationship/output_bias"] = (2,)
    return shapes


def size(shapes):
    total = 0
    for shape in shapes.values():
        n = 1
        for d in shape:
            n *= d
        total += n
    return total


SMALL_PRESETS = [n for n in PRESETS if not n.startswith(("albert_xlarge", "albert_xx"))]
BIG_PRESETS = [n for n in PRESETS if n not in SMALL_PRESETS]


def built_counts(config, pretrainer=False):
    """Parameter counts of the backbone (and pretrainer) built from `config`.

    Built in a `keras.StatelessScope`, where variables get their shapes but
    no values; the session is cleared before the scope ends, so the 200M
    random values of an xxlarge model are never drawn. Without the garbage
    collection `clear_session` runs by default: a full collection of the
    worker's heap per count, the most of what a count cost.
    """
    with keras.StatelessScope():
        backbone = AlbertBackbone(config)
        counts = [backbone.count_params()]
        if pretrainer:
            counts.append(AlbertPretrainer(backbone).count_params())
        keras.backend.clear_session(free_memory=False)
    return counts


def _check_preset(name):
    config = AlbertConfig.from_preset(name)
    backbone, pretrainer = built_counts(config, pretrainer=True)
    assert backbone == size(official_variable_shapes(config, False))
    assert pretrainer == size(official_variable_shapes(config))


@pytest.mark.parametrize("name", SMALL_PRESETS)
def test_preset_counts_equal_official_variable_sizes(name):
    _check_preset(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", BIG_PRESETS)
def test_big_preset_counts_equal_official_variable_sizes(name):
    _check_preset(name)


def test_paper_table1_sizes():
    millions = {
        "albert_base_v2": 12,
        "albert_large_v2": 18,
        # The paper says 60M and 235M; the released variables add up to
        # 58.7M and 222.6M (known discrepancy of the paper's Table 1).
        "albert_xlarge_v2": 59,
        "albert_xxlarge_v2": 223,
    }
    for name, expected in millions.items():
        config = AlbertConfig.from_preset(name)
        total = size(official_variable_shapes(config, heads=False))
        assert round(total / 1e6) == expected, (name, total)


# Paper Tables 3 and 4, ALBERT-base (L=12, H=768), in millions.
PAPER = {
    (64, "none"): 87,
    (128, "none"): 89,
    (256, "none"): 93,
    (768, "none"): 108,
    (64, "all"): 10,
    (128, "all"): 12,
    (256, "all"): 16,
    (768, "all"): 31,
    (128, "attention"): 64,
    (128, "ffn"): 38,
    (768, "attention"): 83,
    (768, "ffn"): 57,
}


def base_count(embedding_size, sharing, v=30000, h=768, i=3072, layers=12):
    """ALBERT-base backbone size by hand: embeddings + attention/FFN copies + pooler."""
    e = embedding_size
    embeddings = v * e + 512 * e + 2 * e + 2 * e + (e * h + h if e != h else 0)
    attention = 4 * (h * h + h) + 2 * h  # q, k, v, output + LayerNorm
    ffn = h * i + i + i * h + h + 2 * h  # two dense + LayerNorm_1
    attention_copies = 1 if sharing in ("all", "attention") else layers
    ffn_copies = 1 if sharing in ("all", "ffn") else layers
    pooler = h * h + h
    return embeddings + attention_copies * attention + ffn_copies * ffn + pooler


# The paper rounds inconsistently: every shared row is our count rounded to the
# nearest million; the not-shared rows are the count without the pooler
# (BERT's convention), one million lower.
@pytest.mark.parametrize("key", sorted(PAPER))
def test_paper_tables_3_and_4(key):
    embedding_size, sharing = key
    config = AlbertConfig.from_preset(
        "albert_base_v2", embedding_size=embedding_size, sharing=sharing
    )
    (count,) = built_counts(config)
    assert count == base_count(embedding_size, sharing)
    if sharing == "none":
        assert round(count / 1e6) - PAPER[key] == 1
        pooler = 768 * 768 + 768
        assert round((count - pooler) / 1e6) == PAPER[key]
    else:
        assert round(count / 1e6) == PAPER[key]
    # Not shared is exactly the official layout with one group per layer.
    if sharing == "none":
        official = config.replace(sharing="all", num_hidden_groups=12)
        assert count == size(official_variable_shapes(official, heads=False))


@pytest.mark.parametrize(
    "changes",
    [
        dict(),
        dict(sharing="attention", num_hidden_groups=2),
        dict(sharing="ffn", inner_group_num=2),
        dict(sharing="none", embedding_size=64),
        dict(num_hidden_layers=5, num_hidden_groups=2, inner_group_num=2),
        # The official float formula leaves group 15 unused here.
        dict(num_hidden_layers=22, num_hidden_groups=22),
        dict(embedding_size=64, hidden_size=64),
    ],
)
def test_parameter_table_matches_built_model(changes):
    from albert_keras.parameter_table import parameter_table

    config = AlbertConfig.from_preset("albert_tiny", **changes)
    assert parameter_table(config)["total"] == built_counts(config)[0]
