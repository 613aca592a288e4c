"""An independent NumPy ALBERT forward pass, in float64, over official variable names.

Written from the ALBERT paper's definition and the official checkpoint layout,
not from the official code, so that it can check the oracle (and our Keras
model) rather than repeat them. Import it by path (tests/oracle has no
__init__.py): `sys.path.insert(0, "tests/oracle"); import numpy_reference`.

    weights = read_checkpoint("DIR/model.ckpt-best")     # {name: ndarray}
    out = forward(weights, config, inputs)                # config: dict
    out.keys() == the oracle's outputs.npz keys, less the inputs

Sharing layouts the official code does not have (every layer its own weights,
only attention shared, ...) are expressed with `param_prefix(layer_idx,
inner_idx, part)`: the variable-name prefix of one block part, where part is
"attention" (attention_1/... and LayerNorm/) or "ffn" (ffn_1/... and
LayerNorm_1/). `relayout` copies official weights into such a layout.
"""

import numpy as np

ATTENTION = "attention"
FFN = "ffn"

# Variable names inside one block part, relative to its param_prefix; the
# official names inside `bert/encoder/transformer/group_g/inner_group_i/`.
PART_VARIABLES = {
    ATTENTION: tuple(
        f"attention_1/{layer}/{kind}"
        for layer in ("self/query", "self/key", "self/value", "output/dense")
        for kind in ("kernel", "bias")
    )
    + ("LayerNorm/gamma", "LayerNorm/beta"),
    FFN: tuple(
        f"ffn_1/{layer}/{kind}"
        for layer in ("intermediate/dense", "intermediate/output/dense")
        for kind in ("kernel", "bias")
    )
    + ("LayerNorm_1/gamma", "LayerNorm_1/beta"),
}

LAYER_NORM_EPSILON = 1e-12
MASK_ADDER = -10000.0
INPUT_KEYS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")


def official_param_prefix(num_hidden_layers, num_hidden_groups):
    """The official layout: layer l uses group int(l / L * G) for both parts.

    The float formula (not l * G // L) is the official one; for the released
    configurations the two agree, but the float one is what defines them.
    """

    def param_prefix(layer_idx, inner_idx, part):
        del part  # the official code shares attention and FFN alike
        group = int(layer_idx / num_hidden_layers * num_hidden_groups)
        return f"bert/encoder/transformer/group_{group}/inner_group_{inner_idx}/"

    return param_prefix


def relayout(weights, config, param_prefix, source_prefix=None):
    """Official weights (or another layout's) copied into `param_prefix`'s layout.

    Every (layer, inner group, part) gets the arrays its `source_prefix` block
    part has (default: the official group sharing), so the result computes the
    same function under the new names. Non-block variables are kept as they are.
    """
    config = _config_dict(config)
    if source_prefix is None:
        source_prefix = official_param_prefix(
            config["num_hidden_layers"], config["num_hidden_groups"]
        )
    block_names = set()
    result = {}
    for layer_idx in range(config["num_hidden_layers"]):
        for inner_idx in range(config.get("inner_group_num", 1)):
            for part, names in PART_VARIABLES.items():
                old = source_prefix(layer_idx, inner_idx, part)
                new = param_prefix(layer_idx, inner_idx, part)
                for name in names:
                    block_names.add(old + name)
                    value = weights[old + name]
                    # A layout that shares more than the source did cannot
                    # hold these weights; say so instead of keeping one copy.
                    if new + name in result and not np.array_equal(
                        result[new + name], value
                    ):
                        raise ValueError(
                            f"{new + name} would need two different values: the "
                            "new layout shares weights the source does not"
                        )
                    result[new + name] = value
    for name, value in weights.items():
        if name not in block_names:
            result[name] = value
    return result


def read_checkpoint(prefix):
    """{variable name: ndarray} of a TF checkpoint (any TF version's format)."""
    import tensorflow as tf  # lazily: the reference itself needs only NumPy

    reader = tf.train.load_checkpoint(prefix)
    names = reader.get_variable_to_shape_map()
    return {name: reader.get_tensor(name) for name in names}


def gelu(x):
    """The tanh approximation of GELU, which the ALBERT releases were trained with."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = {
    "gelu": gelu,
    "relu": lambda x: np.maximum(x, 0.0),
    "tanh": np.tanh,
    "linear": lambda x: x,
}


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + LAYER_NORM_EPSILON) * gamma + beta


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _config_dict(config):
    return dict(config) if isinstance(config, dict) else dict(vars(config))


def forward(weights, config, inputs, param_prefix=None):
    """The model's outputs, keyed as in the oracle's outputs.npz, in float64.

    weights: {variable name: array}; only the names the computation needs are
    read (optimizer slots and the like are ignored). The MLM, SOP and
    classifier outputs are computed when their head variables are present
    (`cls/predictions/*` plus inputs["masked_lm_positions"],
    `cls/seq_relationship/*`, root `output_weights`/`output_bias`).
    config: albert_config.json as a dict (or an object with those attributes).
    inputs: input_ids, input_mask, segment_ids [B, S] int arrays, optionally
    masked_lm_positions [B, P].
    """
    config = _config_dict(config)
    num_layers = config["num_hidden_layers"]
    inner_groups = config.get("inner_group_num", 1)
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    act = ACTIVATIONS[config["hidden_act"].lower()]
    if param_prefix is None:
        param_prefix = official_param_prefix(num_layers, config["num_hidden_groups"])

    def w(name):
        return np.asarray(weights[name], np.float64)

    ids = np.asarray(inputs["input_ids"])
    mask = np.asarray(inputs["input_mask"])
    segments = np.asarray(inputs["segment_ids"])
    batch, length = ids.shape
    outputs = {}

    # Embeddings: word + token type + absolute position, then LayerNorm; their
    # width is embedding_size (E), mapped to hidden_size (H) when E != H.
    e = "bert/embeddings/"
    x = (
        w(e + "word_embeddings")[ids]
        + w(e + "token_type_embeddings")[segments]
        + w(e + "position_embeddings")[:length]
    )
    x = layer_norm(x, w(e + "LayerNorm/gamma"), w(e + "LayerNorm/beta"))
    outputs["embedding_output"] = x
    if config["embedding_size"] != hidden:
        m = "bert/encoder/embedding_hidden_mapping_in/"
        x = x @ w(m + "kernel") + w(m + "bias")

    # Padding keys get a large negative score; queries are not masked.
    adder = (1.0 - mask.astype(np.float64))[:, None, None, :] * MASK_ADDER
    head_size = hidden // heads

    def split_heads(t):  # [B, S, H] -> [B, heads, S, head_size]
        return t.reshape(batch, length, heads, head_size).transpose(0, 2, 1, 3)

    k = 0
    for layer_idx in range(num_layers):
        for inner_idx in range(inner_groups):
            # Attention sub-block, post-LN with a residual.
            p = param_prefix(layer_idx, inner_idx, ATTENTION)
            a = p + "attention_1/"
            q = split_heads(x @ w(a + "self/query/kernel") + w(a + "self/query/bias"))
            key = split_heads(x @ w(a + "self/key/kernel") + w(a + "self/key/bias"))
            v = split_heads(x @ w(a + "self/value/kernel") + w(a + "self/value/bias"))
            scores = q @ key.transpose(0, 1, 3, 2) / np.sqrt(head_size) + adder
            context = softmax(scores) @ v
            context = context.transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            y = context @ w(a + "output/dense/kernel") + w(a + "output/dense/bias")
            x = layer_norm(y + x, w(p + "LayerNorm/gamma"), w(p + "LayerNorm/beta"))
            # Feed-forward sub-block, post-LN with a residual.
            p = param_prefix(layer_idx, inner_idx, FFN)
            f = p + "ffn_1/intermediate/"
            y = act(x @ w(f + "dense/kernel") + w(f + "dense/bias"))
            y = y @ w(f + "output/dense/kernel") + w(f + "output/dense/bias")
            x = layer_norm(y + x, w(p + "LayerNorm_1/gamma"), w(p + "LayerNorm_1/beta"))
            outputs[f"layer_{k}"] = x
            k += 1
    outputs["sequence_output"] = x

    pooler = "bert/pooler/dense/"
    pooled = np.tanh(x[:, 0] @ w(pooler + "kernel") + w(pooler + "bias"))
    outputs["pooled_output"] = pooled

    c = "cls/predictions/"
    if c + "output_bias" in weights and "masked_lm_positions" in inputs:
        positions = np.asarray(inputs["masked_lm_positions"])
        picked = x[np.arange(batch)[:, None], positions].reshape(-1, hidden)
        tr = c + "transform/"
        t = act(picked @ w(tr + "dense/kernel") + w(tr + "dense/bias"))
        t = layer_norm(t, w(tr + "LayerNorm/gamma"), w(tr + "LayerNorm/beta"))
        # The decoder is the word embedding table, transposed, plus a bias.
        word_embeddings = w("bert/embeddings/word_embeddings")
        outputs["mlm_logits"] = t @ word_embeddings.T + w(c + "output_bias")

    s = "cls/seq_relationship/"
    if s + "output_weights" in weights:
        sop = pooled @ w(s + "output_weights").T + w(s + "output_bias")
        outputs["sop_logits"] = sop

    if "output_weights" in weights:
        outputs["classifier_logits"] = pooled @ w("output_weights").T + w("output_bias")
    return outputs
