"""Model Garden's TF2 ALBERT names <-> the official TF1 names, and its config.

TensorFlow Model Garden's `AlbertEncoder` (the TF2 Hub `tensorflow/albert_en_*`
SavedModels, and checkpoints of `official/nlp` trained or converted by its
`tf2_albert_encoder_checkpoint_converter`) keeps the one shared layer as
`transformer/...` with Keras `EinsumDense` attention kernels of 3 dimensions
([H, heads, head size] and [heads, head size, H]); the official layout is the
same numbers reshaped to 2 dimensions. No Keras here: the reader uses this
table before any model is built.
"""

from __future__ import annotations

import json

import numpy as np

from checkpoints_convert.conversion_error import ConversionError

_LAYER = "bert/encoder/transformer/group_0/inner_group_0/"
# Model Garden variable name (the end of the stored full name, which may carry
# a scope such as the pretrainer's `bert/`) -> official name.
MODEL_GARDEN_NAMES = {
    "word_embeddings/embeddings": "bert/embeddings/word_embeddings",
    "position_embedding/embeddings": "bert/embeddings/position_embeddings",
    "type_embeddings/embeddings": "bert/embeddings/token_type_embeddings",
    "embeddings/layer_norm/gamma": "bert/embeddings/LayerNorm/gamma",
    "embeddings/layer_norm/beta": "bert/embeddings/LayerNorm/beta",
    "embedding_projection/kernel": "bert/encoder/embedding_hidden_mapping_in/kernel",
    "embedding_projection/bias": "bert/encoder/embedding_hidden_mapping_in/bias",
    **{
        f"transformer/self_attention/{p}/{v}": f"{_LAYER}attention_1/self/{p}/{v}"
        for p in ("query", "key", "value")
        for v in ("kernel", "bias")
    },
    **{
        f"transformer/{mg}/{v}": f"{_LAYER}attention_1/output/dense/{v}"
        for mg in (
            "self_attention/attention_output",
            "self_attention_output",  # the 2020 `layers.Transformer` (TF2 Hub /1, /2)
        )
        for v in ("kernel", "bias")
    },
    **{
        f"transformer/{mg}/{v}": f"{_LAYER}{official}/{v}"
        for mg, official in (
            ("self_attention_layer_norm", "LayerNorm"),
            ("output_layer_norm", "LayerNorm_1"),
        )
        for v in ("gamma", "beta")
    },
    **{
        f"transformer/{mg}/{v}": f"{_LAYER}ffn_1/intermediate/{official}/{v}"
        for mg, official in (("intermediate", "dense"), ("output", "output/dense"))
        for v in ("kernel", "bias")
    },
    "pooler_transform/kernel": "bert/pooler/dense/kernel",
    "pooler_transform/bias": "bert/pooler/dense/bias",
    # BertPretrainerV2's masked-LM head (the hub's `mlm` part).
    **{
        f"cls/predictions/transform/{v}": f"cls/predictions/transform/{v}"
        for v in ("dense/kernel", "dense/bias", "LayerNorm/gamma", "LayerNorm/beta")
    },
    "cls/predictions/output_bias/bias": "cls/predictions/output_bias",
}
_HEADED = ("attention_1/self/",)  # [H, heads, size] kernels, [heads, size] biases
_OUTPUT = "attention_1/output/dense/kernel"  # [heads, size, H]


def official_name(full_name: str) -> str | None:
    """The official name of a Model Garden variable's full name, else None.

    Example:
    >>> official_name("transformer/self_attention/query/kernel")
    'bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query/kernel'
    >>> official_name("bert/cls/predictions/output_bias/bias")
    'cls/predictions/output_bias'
    """
    for name, official in MODEL_GARDEN_NAMES.items():
        if full_name == name or full_name.endswith("/" + name):
            return official
    return None


def heads_of(official: str, shape) -> int | None:
    """The head count a Model Garden attention variable's shape shows, else None.

    Example:
    >>> heads_of(
    ...     "bert/encoder/transformer/group_0/inner_group_0/attention_1/self/key/bias",
    ...     (12, 64),
    ... )
    12
    """
    if any(p in official for p in _HEADED):
        return int(shape[-2]) if len(shape) in (2, 3) else None
    if official.endswith(_OUTPUT) and len(shape) == 3:
        return int(shape[0])
    return None


def official_shape(official: str, shape) -> tuple[int, ...]:
    """The official (2-D kernel, 1-D bias) shape of a Model Garden variable.

    Example:
    >>> layer = "bert/encoder/transformer/group_0/inner_group_0/"
    >>> official_shape(layer + "attention_1/self/key/kernel", (768, 12, 64))
    (768, 768)
    """
    shape = tuple(int(d) for d in shape)
    if heads_of(official, shape) is None:
        return shape
    if official.endswith(_OUTPUT):
        return (shape[0] * shape[1], shape[2])
    if len(shape) == 3:
        return (shape[0], shape[1] * shape[2])
    return (shape[0] * shape[1],)


def to_official(official: str, value: np.ndarray) -> np.ndarray:
    """`value` in the official layout (the heads' axes merged, C order)."""
    return np.reshape(value, official_shape(official, value.shape))


# AlbertEncoder's `get_config` field -> the official config field.
_ENCODER_FIELDS = {
    "vocab_size": "vocab_size",
    "embedding_width": "embedding_size",
    "hidden_size": "hidden_size",
    "num_layers": "num_hidden_layers",
    "num_attention_heads": "num_attention_heads",
    "intermediate_size": "intermediate_size",
    "max_sequence_length": "max_position_embeddings",
    "type_vocab_size": "type_vocab_size",
    "dropout_rate": "hidden_dropout_prob",
    "attention_dropout_rate": "attention_probs_dropout_prob",
}
# Model Garden's `gelu` (registered as "Text>gelu") is the tanh approximation,
# the official "gelu"; Keras's own "gelu" is the erf one.
_ACTIVATIONS = {
    "Text>gelu": "gelu",
    "gelu": "gelu_exact",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}


def encoder_config(encoder: dict, source: str) -> dict:
    """The official config fields of an `AlbertEncoder`'s saved Keras config.

    Args:
        encoder: the `config` of the encoder's Keras metadata.
        source: the file it came from, for errors.

    Example:
    >>> encoder_config({"vocab_size": 30000, "embedding_width": 128,
    ...     "hidden_size": 768, "num_layers": 12, "num_attention_heads": 12,
    ...     "intermediate_size": 3072, "max_sequence_length": 512,
    ...     "type_vocab_size": 2, "activation": "Text>gelu"}, "x")["hidden_act"]
    'gelu'
    """
    fields = _ENCODER_FIELDS.items()
    values = {ours: encoder[mg] for mg, ours in fields if mg in encoder}
    missing = [mg for mg in list(_ENCODER_FIELDS)[:8] if mg not in encoder]
    if missing:
        raise ConversionError(
            f"{source!r}: the AlbertEncoder config lacks {', '.join(missing)}; pass "
            "the model's albert_config.json as config=."
        )
    if values["embedding_size"] is None:
        values["embedding_size"] = values["hidden_size"]
    values["hidden_act"] = _activation(encoder.get("activation", "Text>gelu"), source)
    initializer = encoder.get("initializer")
    if isinstance(initializer, dict):
        stddev = (initializer.get("config") or {}).get("stddev")
        if stddev is not None:
            values["initializer_range"] = float(stddev)
    return values


def _activation(activation, source):
    """Our `hidden_act` for a saved Keras activation (a name or its dict)."""
    name = activation.get("config") if isinstance(activation, dict) else activation
    if name not in _ACTIVATIONS:
        raise ConversionError(
            f"{source!r}: the AlbertEncoder's activation {json.dumps(activation)} "
            f"is not one albert-keras has (known: {', '.join(_ACTIVATIONS)}); pass "
            "an albert_config.json as config= if you know it."
        )
    return _ACTIVATIONS[name]
