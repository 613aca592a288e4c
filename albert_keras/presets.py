"""Named configs: the official v1, v2 and `*_zh` releases, and small ones for tests.

Data only: each preset is the dict of `albert_config.json` fields that
`AlbertConfig.from_preset(name)` builds its config from (fields left out take
`AlbertConfig`'s defaults). The sizes follow the released `albert_config.json`
files; v1 trains with dropout 0.1, v2 without. The Chinese models use a
WordPiece vocabulary of 21128 pieces and ReLU. The xlarge head count is
ambiguous in the releases (the v2 config says 32, v1 and the hub pages 16);
each preset follows its own release's config.
"""

from __future__ import annotations

_SIZES = {
    # name: (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size)
    "base": (768, 12, 12, 3072),
    "large": (1024, 24, 16, 4096),
    "xlarge": (2048, 24, 16, 8192),
    "xxlarge": (4096, 12, 64, 16384),
}


def _release(size, version, **overrides):
    hidden, layers, heads, intermediate = _SIZES[size]
    dropout = 0.1 if version == "v1" else 0.0
    values = dict(
        vocab_size=30000,
        embedding_size=128,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_hidden_groups=1,
        inner_group_num=1,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        hidden_act="gelu",
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        max_position_embeddings=512,
        type_vocab_size=2,
        initializer_range=0.02,
    )
    values.update(overrides)
    return values


PRESETS: dict[str, dict] = {}
for _size in _SIZES:
    PRESETS[f"albert_{_size}_v1"] = _release(_size, "v1")
    PRESETS[f"albert_{_size}_v2"] = _release(_size, "v2")
    # The Chinese releases: WordPiece vocab, ReLU, no dropout.
    PRESETS[f"albert_{_size}_zh"] = _release(
        _size, "v2", vocab_size=21128, hidden_act="relu"
    )
PRESETS["albert_xlarge_v2"] = _release("xlarge", "v2", num_attention_heads=32)
PRESETS["albert_xxlarge_zh"] = _release(
    "xxlarge", "v2", vocab_size=21128, hidden_act="relu", num_attention_heads=16
)
# Small configs: `small` is the benchmark and default pretraining config,
# `tiny` runs in tests in milliseconds.
# No dropout, as the v2 releases: on CPUs with XLA, dropout's random masks
# cost as much as the rest of a small model's training step (measured: 31
# vs 76 seq/s fine-tuning at 16 x 64).
PRESETS["albert_small"] = dict(
    embedding_size=128,
    hidden_size=256,
    num_hidden_layers=4,
    num_attention_heads=4,
    intermediate_size=1024,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)
PRESETS["albert_tiny"] = dict(
    vocab_size=1000,
    embedding_size=32,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=128,
    max_position_embeddings=128,
)

# Short aliases: "base" means the v2 release, as on the hubs.
ALIASES = {size: f"albert_{size}_v2" for size in _SIZES}
ALIASES.update({"small": "albert_small", "tiny": "albert_tiny"})
# How the releases are packed (albert_base_v2.tar.gz).
RELEASE_ARCHIVES = (".tar.gz", ".tgz", ".tar")


def preset_values(name: str) -> dict:
    """A copy of the named preset's config fields (aliases: base, large, ...)."""
    key = ALIASES.get(name, name)
    if key not in PRESETS:
        raise ValueError(
            f"Unknown preset. Received: {name!r}. "
            f"Allowed: {', '.join(sorted(PRESETS) + sorted(ALIASES))}"
        )
    return dict(PRESETS[key])
