"""Hugging Face transformers ALBERT names <-> the official TF1 names.

transformers' `AlbertModel` / `AlbertFor*` checkpoints (`model.safetensors`,
`config.json`) hold the same variables as the google-research release under
other names, with `nn.Linear` weights stored [out, in] where the official
dense kernels are [in, out]. `HF_NAME_TABLE` maps each official name pattern
(`{g}` group, `{i}` inner group) to its transformers key and the transform
between the two layouts; the HF reader and writer translate through it, so
the official name table (`name_table.py`) stays the only map to Keras weights.
The config fields have the official names too; only `hidden_act` differs in
meaning (HF "gelu" is the exact erf GELU, the official "gelu" HF's "gelu_new").
"""

from __future__ import annotations

import re

from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.name_row import TRANSPOSE

_OFFICIAL_BLOCK = "bert/encoder/transformer/group_{g}/inner_group_{i}/"
_HF_BLOCK = "albert.encoder.albert_layer_groups.{g}.albert_layers.{i}."


def _linear(official, hf):
    """A dense layer: kernel [in, out] <-> weight [out, in], and its bias."""
    return [
        (official + "/kernel", hf + ".weight", TRANSPOSE),
        (official + "/bias", hf + ".bias", None),
    ]


def _layer_norm(official, hf):
    return [
        (official + "/gamma", hf + ".weight", None),
        (official + "/beta", hf + ".bias", None),
    ]


# (official pattern, transformers key pattern, transform official <-> HF)
HF_NAME_TABLE: tuple[tuple[str, str, object], ...] = tuple(
    [
        (
            "bert/embeddings/word_embeddings",
            "albert.embeddings.word_embeddings.weight",
            None,
        ),
        (
            "bert/embeddings/token_type_embeddings",
            "albert.embeddings.token_type_embeddings.weight",
            None,
        ),
        (
            "bert/embeddings/position_embeddings",
            "albert.embeddings.position_embeddings.weight",
            None,
        ),
        *_layer_norm("bert/embeddings/LayerNorm", "albert.embeddings.LayerNorm"),
        *_linear(
            "bert/encoder/embedding_hidden_mapping_in",
            "albert.encoder.embedding_hidden_mapping_in",
        ),
        *_linear(
            _OFFICIAL_BLOCK + "attention_1/self/query", _HF_BLOCK + "attention.query"
        ),
        *_linear(_OFFICIAL_BLOCK + "attention_1/self/key", _HF_BLOCK + "attention.key"),
        *_linear(
            _OFFICIAL_BLOCK + "attention_1/self/value", _HF_BLOCK + "attention.value"
        ),
        *_linear(
            _OFFICIAL_BLOCK + "attention_1/output/dense", _HF_BLOCK + "attention.dense"
        ),
        *_layer_norm(_OFFICIAL_BLOCK + "LayerNorm", _HF_BLOCK + "attention.LayerNorm"),
        *_linear(_OFFICIAL_BLOCK + "ffn_1/intermediate/dense", _HF_BLOCK + "ffn"),
        *_linear(
            _OFFICIAL_BLOCK + "ffn_1/intermediate/output/dense",
            _HF_BLOCK + "ffn_output",
        ),
        *_layer_norm(
            _OFFICIAL_BLOCK + "LayerNorm_1", _HF_BLOCK + "full_layer_layer_norm"
        ),
        *_linear("bert/pooler/dense", "albert.pooler"),
        # AlbertMLMHead; its decoder is tied to the word embeddings.
        *_linear("cls/predictions/transform/dense", "predictions.dense"),
        *_layer_norm("cls/predictions/transform/LayerNorm", "predictions.LayerNorm"),
        ("cls/predictions/output_bias", "predictions.bias", None),
        # AlbertSOPHead: nn.Linear(H, 2) is [2, H], the official layout.
        (
            "cls/seq_relationship/output_weights",
            "sop_classifier.classifier.weight",
            None,
        ),
        ("cls/seq_relationship/output_bias", "sop_classifier.classifier.bias", None),
        # AlbertForSequenceClassification and AlbertForMultipleChoice: [N, H]
        # as the official run_classifier / run_race `output_weights`.
        ("output_weights", "classifier.weight", None),
        ("output_bias", "classifier.bias", None),
        # AlbertForTokenClassification: the same keys, per token (the reader
        # names them so for that class; the first rows win by key).
        ("token_classifier/output_weights", "classifier.weight", None),
        ("token_classifier/output_bias", "classifier.bias", None),
        # AlbertForQuestionAnswering: [2, H] as run_squad v1's cls/squad.
        ("cls/squad/output_weights", "qa_outputs.weight", None),
        ("cls/squad/output_bias", "qa_outputs.bias", None),
    ]
)

# Keys a transformers checkpoint may hold that no weight takes: the position
# ids buffer, and the MLM decoder tied to the word embeddings and output bias
# (checked equal to them by the reader).
HF_BUFFERS = ("albert.embeddings.position_ids",)
HF_TIED = {
    "predictions.decoder.weight": "albert.embeddings.word_embeddings.weight",
    "predictions.decoder.bias": "predictions.bias",
}
# transformers classes built without the pooler (`add_pooling_layer=False`):
# the pooler, which their heads do not read, is not in the checkpoints they
# save (the hub's albert-base-v2, an AlbertForMaskedLM converted long ago,
# still has it, and it is read).
HF_WITHOUT_POOLER = (
    "AlbertForQuestionAnswering",
    "AlbertForTokenClassification",
    "AlbertForMaskedLM",
)
# transformers classes whose `classifier.*` is a per-token head (the official
# names' `output_weights` is run_classifier's, on the pooled output).
HF_TOKEN_HEADS = ("AlbertForTokenClassification",)


def has_token_head(architectures) -> bool:
    """Whether a transformers config's `architectures` name a per-token head.

    Example:
    >>> has_token_head(["AlbertForTokenClassification"]), has_token_head(None)
    (True, False)
    """
    return bool(set(architectures or []) & set(HF_TOKEN_HEADS))


TOKEN_HEAD_PREFIX = "token_classifier/"

_HF_ACTIVATIONS = {  # transformers `hidden_act` -> ours
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "gelu": "gelu_exact",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
_OUR_ACTIVATIONS = {  # ours -> transformers
    "gelu": "gelu_new",
    "gelu_new": "gelu_new",
    "gelu_exact": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
# config.json fields with the same name and meaning in AlbertConfig.
CONFIG_FIELDS = (
    "vocab_size",
    "embedding_size",
    "hidden_size",
    "num_hidden_layers",
    "num_hidden_groups",
    "inner_group_num",
    "num_attention_heads",
    "intermediate_size",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "initializer_range",
)


def _regex(pattern):
    escaped = re.escape(pattern)
    escaped = escaped.replace(r"\{g\}", r"(?P<g>\d+)").replace(r"\{i\}", r"(?P<i>\d+)")
    return re.compile(escaped + "$")


_FROM_HF = [
    (_regex(hf), official, transform) for official, hf, transform in HF_NAME_TABLE
]
_TO_HF = [
    (_regex(official), hf, transform) for official, hf, transform in HF_NAME_TABLE
]


def official_name(hf_key: str):
    """(official name, transform) of a transformers key, or None if unknown.

    Keys of a bare `AlbertModel` (no `albert.` prefix) are accepted too.

    Example:
    >>> name, transform = official_name("albert.pooler.weight")
    >>> name, transform
    ('bert/pooler/dense/kernel', TRANSPOSE)
    """
    for key in (hf_key, "albert." + hf_key):
        for regex, official, transform in _FROM_HF:
            match = regex.match(key)
            if match:
                return official.format(**match.groupdict()), transform
    return None


def hf_key(official: str):
    """(transformers key, transform) of an official name; ConversionError if none."""
    for regex, hf, transform in _TO_HF:
        match = regex.match(official)
        if match:
            return hf.format(**match.groupdict()), transform
    raise ConversionError(f"{official!r} has no transformers name in HF_NAME_TABLE.")


def albert_config_dict(hf_config: dict, source: str) -> dict:
    """An `albert_config.json` dict from a transformers ALBERT `config.json`.

    Raises `ConversionError` for another model type or a setting our model
    does not have (relative position embeddings, a LayerNorm epsilon other
    than 1e-12, an unknown activation).
    """
    model_type = hf_config.get("model_type")
    if model_type != "albert":
        raise ConversionError(
            f"{source!r} is a transformers config of model_type={model_type!r}, "
            "not 'albert'."
        )
    missing = [
        f for f in CONFIG_FIELDS if f not in hf_config and f != "inner_group_num"
    ]
    if missing:
        raise ConversionError(f"{source!r} lacks the ALBERT fields {missing}.")
    position = hf_config.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise ConversionError(
            f"{source!r}: position_embedding_type={position!r}; albert-keras has "
            "the official absolute position embeddings only."
        )
    epsilon = float(hf_config.get("layer_norm_eps", 1e-12))
    if abs(epsilon - 1e-12) > 1e-15:
        raise ConversionError(
            f"{source!r}: layer_norm_eps={epsilon}; albert-keras uses the official "
            "1e-12."
        )
    act = str(hf_config.get("hidden_act", "gelu_new"))
    if act not in _HF_ACTIVATIONS:
        raise ConversionError(
            f"{source!r}: hidden_act={act!r} is not one albert-keras has. Allowed: "
            f"{', '.join(_HF_ACTIVATIONS)}."
        )
    values = {f: hf_config[f] for f in CONFIG_FIELDS if f in hf_config}
    check_group_formula(
        int(values["num_hidden_layers"]), int(values["num_hidden_groups"]), source
    )
    values["hidden_act"] = _HF_ACTIVATIONS[act]
    return values


def check_group_formula(layers: int, groups: int, source: str) -> None:
    """Raises where transformers and the official code group layers differently.

    The official code gives layer `l` group `int(l / L * G)`, transformers
    `int(l / (L / G))`; in float arithmetic they differ for a few (L, G), e.g.
    L = G = 22 (the official formula leaves group 15 unused). Such a model
    computes different things in the two, so it is not converted.
    """
    official = [int(layer / layers * groups) for layer in range(layers)]
    theirs = [int(layer / (layers / groups)) for layer in range(layers)]
    if official != theirs:
        differ = [k for k in range(layers) if official[k] != theirs[k]]
        raise ConversionError(
            f"{source}: num_hidden_layers={layers}, num_hidden_groups={groups} "
            f"give layer {differ[0]} group {official[differ[0]]} in the official "
            f"code but group {theirs[differ[0]]} in transformers (float rounding "
            "of their two formulas); the two models differ, so this config "
            "cannot be converted between them."
        )


def hf_config_dict(config, architecture: str) -> dict:
    """A transformers `config.json` dict for an AlbertConfig."""
    check_group_formula(
        config.num_hidden_layers, config.num_hidden_groups, "this model"
    )
    act = str(config.hidden_act).lower()
    if act not in _OUR_ACTIVATIONS:
        raise ConversionError(f"hidden_act={act!r} has no transformers name.")
    values = {f: getattr(config, f) for f in CONFIG_FIELDS}
    values.update(
        architectures=[architecture],
        model_type="albert",
        hidden_act=_OUR_ACTIVATIONS[act],
        layer_norm_eps=1e-12,
        position_embedding_type="absolute",
        classifier_dropout_prob=0.1,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    return values
