"""The cases the official oracle writes checkpoints for (tests import this).

Import by path: `sys.path.insert(0, "tests/oracle"); from cases import CASES`.
Each case is the JSON the oracle's `make --spec` takes: name, config (an
albert_config.json dict), seed, batch_size, seq_length, num_masked, and
optionally num_labels (official run_classifier head), optimizer_slots
(`<var>/adam_m`, `<var>/adam_v`, `global_step`) and hub_module (also
`<name>_hub/` and `<name>_hub_prefixed/` TF1 Hub folders).
"""

BASE = {
    "vocab_size": 100,
    "embedding_size": 16,
    "hidden_size": 32,
    "num_hidden_layers": 3,
    "num_hidden_groups": 1,
    "inner_group_num": 1,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "max_position_embeddings": 24,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
}


def case(name, seed, num_labels=None, **changes):
    """A tiny case: BASE with `changes`; 3 rows of 12 tokens, 4 masked each."""
    spec = {
        "name": name,
        "config": {**BASE, **changes},
        "seed": seed,
        "batch_size": 3,
        "seq_length": 12,
        "num_masked": 4,
    }
    if num_labels:
        spec["num_labels"] = num_labels
    return spec


CASES = [
    {**case("all_shared", 1), "hub_module": True},
    case("groups_l4_g2", 2, num_hidden_layers=4, num_hidden_groups=2),
    case("inner_groups_2", 3, inner_group_num=2),
    case(
        "l5_g2_inner2", 4, num_hidden_layers=5, num_hidden_groups=2, inner_group_num=2
    ),
    case("e_equals_h", 5, embedding_size=32),
    case("relu", 6, hidden_act="relu"),
    {
        **case(
            "v1_dropout_classifier",
            7,
            num_labels=3,
            hidden_dropout_prob=0.1,
            attention_probs_dropout_prob=0.1,
        ),
        "optimizer_slots": True,
    },
]
