"""The name table: official TF1 checkpoint names <-> our Keras weights.

Each row is (official name, attribute path of the Keras weight, transform).
Backbone rows are relative to the `AlbertBackbone`, block rows to the
`TransformerBlock` of a group, head rows to the task model. `TRANSPOSE` marks
heads whose official kernel is stored [out, in] where our Dense has [in, out].
"""

from __future__ import annotations

TRANSPOSE = "transpose"

BACKBONE_ROWS = [
    ("bert/embeddings/word_embeddings", "embeddings.word_embeddings", None),
    ("bert/embeddings/token_type_embeddings", "embeddings.token_type_embeddings", None),
    ("bert/embeddings/position_embeddings", "embeddings.position_embeddings", None),
    ("bert/embeddings/LayerNorm/beta", "embeddings.layer_norm.beta", None),
    ("bert/embeddings/LayerNorm/gamma", "embeddings.layer_norm.gamma", None),
    ("bert/pooler/dense/kernel", "pooler.kernel", None),
    ("bert/pooler/dense/bias", "pooler.bias", None),
]
# Absent from the official graph when embedding_size == hidden_size.
PROJECTION_ROWS = [
    (
        "bert/encoder/embedding_hidden_mapping_in/kernel",
        "embeddings.projection.kernel",
        None,
    ),
    (
        "bert/encoder/embedding_hidden_mapping_in/bias",
        "embeddings.projection.bias",
        None,
    ),
]
BLOCK_PREFIX = "bert/encoder/transformer/group_{g}/inner_group_{i}/"
BLOCK_ROWS = [
    ("attention_1/self/query/kernel", "attention.query.kernel", None),
    ("attention_1/self/query/bias", "attention.query.bias", None),
    ("attention_1/self/key/kernel", "attention.key.kernel", None),
    ("attention_1/self/key/bias", "attention.key.bias", None),
    ("attention_1/self/value/kernel", "attention.value.kernel", None),
    ("attention_1/self/value/bias", "attention.value.bias", None),
    ("attention_1/output/dense/kernel", "attention.output_dense.kernel", None),
    ("attention_1/output/dense/bias", "attention.output_dense.bias", None),
    ("LayerNorm/beta", "attention.layer_norm.beta", None),
    ("LayerNorm/gamma", "attention.layer_norm.gamma", None),
    ("ffn_1/intermediate/dense/kernel", "feed_forward.intermediate.kernel", None),
    ("ffn_1/intermediate/dense/bias", "feed_forward.intermediate.bias", None),
    (
        "ffn_1/intermediate/output/dense/kernel",
        "feed_forward.output_dense.kernel",
        None,
    ),
    ("ffn_1/intermediate/output/dense/bias", "feed_forward.output_dense.bias", None),
    ("LayerNorm_1/beta", "feed_forward.layer_norm.beta", None),
    ("LayerNorm_1/gamma", "feed_forward.layer_norm.gamma", None),
]
HEAD_ROWS = {
    "AlbertPretrainer": [
        ("cls/predictions/transform/dense/kernel", "mlm_head.dense.kernel", None),
        ("cls/predictions/transform/dense/bias", "mlm_head.dense.bias", None),
        ("cls/predictions/transform/LayerNorm/beta", "mlm_head.layer_norm.beta", None),
        (
            "cls/predictions/transform/LayerNorm/gamma",
            "mlm_head.layer_norm.gamma",
            None,
        ),
        ("cls/predictions/output_bias", "mlm_head.output_bias", None),
        ("cls/seq_relationship/output_weights", "sop_head.output_weights", None),
        ("cls/seq_relationship/output_bias", "sop_head.output_bias", None),
    ],
    # The official run_classifier head: root variables.
    "AlbertClassifier": [
        ("output_weights", "classifier.kernel", TRANSPOSE),
        ("output_bias", "classifier.bias", None),
    ],
    "AlbertSpanQA": [
        ("cls/squad/output_weights", "span_head.kernel", TRANSPOSE),
        ("cls/squad/output_bias", "span_head.bias", None),
    ],
    # The official RACE head: root output_weights [1, H], output_bias [1].
    "AlbertMultipleChoice": [
        ("output_weights", "choice_head.kernel", TRANSPOSE),
        ("output_bias", "choice_head.bias", None),
    ],
}


def _resolve(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def official_groups(backbone):
    """(official group index, layer index using it) for each group in use.

    Groups never used by the official float formula `int(l / L * G)` have no
    variables in official checkpoints, and none here. `sharing="none"` is the
    official layout with one group per layer, which only holds when the
    formula maps every layer to its own group.
    """
    config = backbone.config
    layers = config.num_hidden_layers
    if config.sharing == "all":
        groups = {}
        for layer in range(layers):
            groups.setdefault(config.group_index(layer), layer)
        return sorted(groups.items())
    if config.sharing == "none":
        official = [int(n / layers * layers) for n in range(layers)]
        if official != list(range(layers)):
            raise ValueError(
                f"sharing='none' with {layers} layers has no official layout: the "
                "official group formula int(l / L * G) with G = L maps two layers "
                "to one group. Use a number of layers where it does not, or "
                "sharing='all'."
            )
        return [(layer, layer) for layer in range(layers)]
    raise ValueError(
        f"sharing={config.sharing!r} (attention-only or FFN-only sharing) cannot be "
        "written in the official checkpoint format, which shares whole blocks by "
        "group. Save it as a .keras file instead."
    )


def weight_table(model):
    """{official name: (Keras variable, transform)} for a backbone or task model."""
    backbone = getattr(model, "backbone", model)
    rows = list(BACKBONE_ROWS)
    if backbone.embeddings.projection is not None:
        rows += PROJECTION_ROWS
    table = {name: (_resolve(backbone, path), t) for name, path, t in rows}
    for group, layer in official_groups(backbone):
        for inner in range(backbone.config.inner_group_num):
            block = backbone.encoder.block(layer, inner)
            prefix = BLOCK_PREFIX.format(g=group, i=inner)
            for name, path, t in BLOCK_ROWS:
                table[prefix + name] = (_resolve(block, path), t)
    if model is not backbone:
        kind = type(model).__name__
        if kind not in HEAD_ROWS:
            raise ValueError(f"No official head layout for {kind}.")
        for name, path, t in HEAD_ROWS[kind]:
            table[name] = (_resolve(model, path), t)
    return table
