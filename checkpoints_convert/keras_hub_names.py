"""`KERAS_HUB_NAME_TABLE`: official names <-> keras-hub `AlbertBackbone` weights.

keras-hub's backbone (`keras_hub.models.AlbertBackbone`, 0.20 and later)
stores the official variables under its own layer names; every layout
difference is a reshape (the attention kernels [H, H] are [H, heads, head]
there, the output kernel [heads, head, H], the biases [heads, head]), so a
row is just (official pattern, attribute path). `{g}` and `{i}` are the
official group and inner group; keras-hub names the block
`group_{g}_inner_layer_{i}`. No Keras here.

`keras_hub_config` translates our config into keras-hub's constructor
arguments and refuses, by name, what keras-hub cannot represent.
"""

from __future__ import annotations

_BLOCK = "bert/encoder/transformer/group_{g}/inner_group_{i}/"
_LAYER = "group_{g}_inner_layer_{i}."
_ATTENTION = _LAYER + "_self_attention_layer."

# (official name pattern, attribute path from the keras-hub backbone)
KERAS_HUB_NAME_TABLE: tuple[tuple[str, str], ...] = (
    ("bert/embeddings/word_embeddings", "token_embedding.embeddings"),
    ("bert/embeddings/token_type_embeddings", "segment_embedding.embeddings"),
    (
        "bert/embeddings/position_embeddings",
        "position_embedding.position_embeddings",
    ),
    ("bert/embeddings/LayerNorm/beta", "embeddings_layer_norm.beta"),
    ("bert/embeddings/LayerNorm/gamma", "embeddings_layer_norm.gamma"),
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "embeddings_projection.kernel"),
    ("bert/encoder/embedding_hidden_mapping_in/bias", "embeddings_projection.bias"),
    *(
        (
            _BLOCK + f"attention_1/self/{part}/{kind}",
            _ATTENTION + f"{part}_dense.{kind}",
        )
        for part in ("query", "key", "value")
        for kind in ("kernel", "bias")
    ),
    (_BLOCK + "attention_1/output/dense/kernel", _ATTENTION + "output_dense.kernel"),
    (_BLOCK + "attention_1/output/dense/bias", _ATTENTION + "output_dense.bias"),
    (_BLOCK + "LayerNorm/beta", _LAYER + "_self_attention_layer_norm.beta"),
    (_BLOCK + "LayerNorm/gamma", _LAYER + "_self_attention_layer_norm.gamma"),
    (
        _BLOCK + "ffn_1/intermediate/dense/kernel",
        _LAYER + "_feedforward_intermediate_dense.kernel",
    ),
    (
        _BLOCK + "ffn_1/intermediate/dense/bias",
        _LAYER + "_feedforward_intermediate_dense.bias",
    ),
    (
        _BLOCK + "ffn_1/intermediate/output/dense/kernel",
        _LAYER + "_feedforward_output_dense.kernel",
    ),
    (
        _BLOCK + "ffn_1/intermediate/output/dense/bias",
        _LAYER + "_feedforward_output_dense.bias",
    ),
    (_BLOCK + "LayerNorm_1/beta", _LAYER + "_feedforward_layer_norm.beta"),
    (_BLOCK + "LayerNorm_1/gamma", _LAYER + "_feedforward_layer_norm.gamma"),
    ("bert/pooler/dense/kernel", "pooled_dense.kernel"),
    ("bert/pooler/dense/bias", "pooled_dense.bias"),
)
# Our task heads with a keras-hub task: (keras-hub class, rows of (official
# name, attribute path from the task, transposed?)). The official
# run_classifier head stores [classes, H]; keras-hub's Dense [H, classes].
KERAS_HUB_TASKS = {
    "classifier": (
        "AlbertTextClassifier",
        (
            ("output_weights", "output_dense.kernel", True),
            ("output_bias", "output_dense.bias", False),
        ),
    ),
}
PROJECTION = "bert/encoder/embedding_hidden_mapping_in/"
# keras-hub's only activation: the tanh GELU (the official "gelu").
KERAS_HUB_ACTIVATIONS = ("gelu", "gelu_new")


def keras_hub_names(num_groups: int, inner_group_num: int):
    """(official name, keras-hub attribute path) for every weight of a backbone.

    Example:
    >>> names = dict(keras_hub_names(1, 1))
    >>> names["bert/pooler/dense/bias"]
    'pooled_dense.bias'
    """
    for pattern, path in KERAS_HUB_NAME_TABLE:
        if "{g}" not in pattern:
            yield pattern, path
            continue
        for g in range(num_groups):
            for i in range(inner_group_num):
                yield pattern.format(g=g, i=i), path.format(g=g, i=i)


def keras_hub_config(config) -> dict:
    """keras-hub `AlbertBackbone` arguments for an `AlbertConfig`.

    Raises `ValueError` naming the field keras-hub cannot represent: another
    activation than the tanh GELU, `sharing` "attention" or "ffn", a layer
    count that the groups do not divide, different hidden and attention
    dropout. `sharing="none"` is one group per layer.

    Example:
    >>> from albert_keras.config import AlbertConfig
    >>> keras_hub_config(AlbertConfig.from_preset("albert_tiny"))["num_layers"]
    2
    """
    problems = []
    if str(config.hidden_act).lower() not in KERAS_HUB_ACTIVATIONS:
        problems.append(
            f"hidden_act={config.hidden_act!r}: keras-hub's AlbertBackbone only "
            "has the tanh GELU (our 'gelu')"
        )
    groups = config.num_hidden_groups
    if config.sharing == "none":
        groups = config.num_hidden_layers
    elif config.sharing != "all":
        problems.append(
            f"sharing={config.sharing!r}: keras-hub shares whole blocks by group "
            "only (sharing 'all' or 'none')"
        )
    if config.num_hidden_layers % groups:
        problems.append(
            f"num_hidden_layers={config.num_hidden_layers} is not a multiple of "
            f"num_hidden_groups={groups}: keras-hub gives every group the same "
            "number of layers"
        )
    if config.hidden_dropout_prob != config.attention_probs_dropout_prob:
        problems.append(
            f"hidden_dropout_prob={config.hidden_dropout_prob} != "
            f"attention_probs_dropout_prob={config.attention_probs_dropout_prob}: "
            "keras-hub has one dropout rate"
        )
    if problems:
        raise ValueError(
            "keras-hub's AlbertBackbone cannot represent this config: "
            + "; ".join(problems)
            + ". Keep the model as a .keras file or an official checkpoint."
        )
    return {
        "vocabulary_size": config.vocab_size,
        "num_layers": config.num_hidden_layers,
        "num_heads": config.num_attention_heads,
        "embedding_dim": config.embedding_size,
        "hidden_dim": config.hidden_size,
        "intermediate_dim": config.intermediate_size,
        "num_groups": groups,
        "num_inner_repetitions": config.inner_group_num,
        "dropout": config.hidden_dropout_prob,
        "max_sequence_length": config.max_position_embeddings,
        "num_segments": config.type_vocab_size,
    }


def albert_config_values(hub_config: dict) -> dict:
    """`albert_config.json` fields of a keras-hub `AlbertBackbone` config.

    Example:
    >>> from albert_keras.config import AlbertConfig
    >>> values = keras_hub_config(AlbertConfig.from_preset("albert_tiny"))
    >>> albert_config_values(values)["hidden_size"]
    64
    """
    return {
        "vocab_size": hub_config["vocabulary_size"],
        "embedding_size": hub_config["embedding_dim"],
        "hidden_size": hub_config["hidden_dim"],
        "num_hidden_layers": hub_config["num_layers"],
        "num_hidden_groups": hub_config.get("num_groups", 1),
        "inner_group_num": hub_config.get("num_inner_repetitions", 1),
        "num_attention_heads": hub_config["num_heads"],
        "intermediate_size": hub_config["intermediate_dim"],
        "hidden_act": "gelu",
        "hidden_dropout_prob": hub_config.get("dropout", 0.0),
        "attention_probs_dropout_prob": hub_config.get("dropout", 0.0),
        "max_position_embeddings": hub_config.get("max_sequence_length", 512),
        "type_vocab_size": hub_config.get("num_segments", 2),
    }
