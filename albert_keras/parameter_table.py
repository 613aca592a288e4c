"""Per-part parameter counts of an ALBERT config, and of BERT of the same size."""

from __future__ import annotations

from albert_keras.config import AlbertConfig


def parameter_table(config: AlbertConfig) -> dict[str, int]:
    """Parameters of each part of the backbone, without building it.

    The encoder parts count one copy per distinct owner: groups actually used
    (the official float formula can leave a group unused), or layers for
    unshared parts.

    Example:
    >>> table = parameter_table(AlbertConfig.from_preset("albert_base_v2"))
    >>> table["total"]
    11683584
    """
    v, e, h, i = (
        config.vocab_size,
        config.embedding_size,
        config.hidden_size,
        config.intermediate_size,
    )
    layers = config.num_hidden_layers
    groups = len({config.group_index(n) for n in range(layers)})
    owners = {
        "all": (groups, groups),
        "attention": (groups, layers),
        "ffn": (layers, groups),
        "none": (layers, layers),
    }[config.sharing]
    inner = config.inner_group_num
    table = {
        "word embeddings (V x E)": v * e,
        "position + segment embeddings": (
            config.max_position_embeddings + config.type_vocab_size
        )
        * e,
        "embedding LayerNorm": 2 * e,
        "projection E -> H": (e * h + h) if e != h else 0,
        "attention blocks": owners[0] * inner * (4 * (h * h + h) + 2 * h),
        "feed-forward blocks": owners[1] * inner * (2 * h * i + i + h + 2 * h),
        "pooler": h * h + h,
    }
    table["total"] = sum(table.values())
    return table


def bert_equivalent(config: AlbertConfig) -> AlbertConfig:
    """The BERT of the same size: E = H and no sharing (the paper's comparison)."""
    return config.replace(
        embedding_size=config.hidden_size,
        num_hidden_groups=config.num_hidden_layers,
        inner_group_num=1,
        sharing="none",
    )


def format_table(config: AlbertConfig) -> str:
    """The ALBERT table next to BERT's, in millions, as text."""
    ours = parameter_table(config)
    bert = parameter_table(bert_equivalent(config))
    width = max(len(k) for k in ours) + 2
    lines = [f"{'part':<{width}}{'ALBERT':>12}{'BERT':>12}"]
    for key in ours:
        if key == "total":
            lines.append("-" * (width + 24))
        lines.append(
            f"{key:<{width}}{ours[key] / 1e6:>11.2f}M{bert[key] / 1e6:>11.2f}M"
        )
    lines.append(
        f"{'ratio BERT / ALBERT':<{width}}{bert['total'] / ours['total']:>23.1f}x"
    )
    return "\n".join(lines)
