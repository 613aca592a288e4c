"""AlbertConfig: lossless official json, validation messages, the group formula."""

import json

import pytest

from albert_keras import AlbertConfig
from albert_keras.presets import ALIASES, PRESETS, preset_values

# Verbatim field sets of released configs (values of albert_base v1, v2, zh).
OFFICIAL_V1_BASE = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "embedding_size": 128,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "num_hidden_groups": 1,
    "net_structure_type": 0,
    "gap_size": 0,
    "num_memory_blocks": 0,
    "inner_group_num": 1,
    "down_scale_factor": 1,
    "type_vocab_size": 2,
    "vocab_size": 30000,
}
OFFICIAL_V2_BASE = dict(
    OFFICIAL_V1_BASE,
    attention_probs_dropout_prob=0,
    hidden_dropout_prob=0,
    layers_to_keep=[],
)
OFFICIAL_ZH_BASE = dict(OFFICIAL_V2_BASE, vocab_size=21128, hidden_act="relu")


@pytest.mark.parametrize(
    "values", [OFFICIAL_V1_BASE, OFFICIAL_V2_BASE, OFFICIAL_ZH_BASE]
)
def test_official_json_round_trip_is_lossless(tmp_path, values):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(values))
    config = AlbertConfig.from_json_file(path)
    out = tmp_path / "out.json"
    config.to_json_file(out)
    written = json.loads(out.read_text())
    # Every official key comes back with its value; nothing is added but the
    # official fields the release omitted (written with their defaults).
    for key, value in values.items():
        assert written[key] == value, key
    assert set(written) - set(values) <= {"layers_to_keep"}


def test_unknown_keys_are_kept_and_written_back(tmp_path):
    values = dict(OFFICIAL_V2_BASE, my_note="kept", use_bias=True)
    config = AlbertConfig.from_dict(values)
    assert config.extra == {"my_note": "kept", "use_bias": True}
    assert config.to_dict()["my_note"] == "kept"
    assert AlbertConfig.from_dict(config.to_dict()) == config


def test_folder_path_and_missing_file(tmp_path):
    (tmp_path / "albert_config.json").write_text(json.dumps(OFFICIAL_V1_BASE))
    assert AlbertConfig.from_json_file(tmp_path).hidden_dropout_prob == 0.1
    with pytest.raises(FileNotFoundError, match="No ALBERT config"):
        AlbertConfig.from_json_file(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        AlbertConfig.from_json_file(tmp_path / "bad.json")


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(hidden_size=100), "hidden_size=100, num_attention_heads=12"),
        (dict(num_hidden_groups=13), "num_hidden_groups=13, num_hidden_layers=12"),
        (dict(hidden_act="swish"), "hidden_act='swish'. Allowed: gelu"),
        (dict(sharing="half"), "sharing='half'. Allowed: all"),
        (dict(vocab_size=0), "vocab_size=0"),
        (dict(num_hidden_layers="12"), "num_hidden_layers='12'"),
        (dict(hidden_dropout_prob=1.5), "hidden_dropout_prob=1.5"),
    ],
)
def test_validation_names_field_value_and_allowed(changes, message):
    with pytest.raises(ValueError) as info:
        AlbertConfig.from_dict(dict(OFFICIAL_V2_BASE, **changes))
    assert message in str(info.value)


def test_activations_of_the_official_code_are_accepted():
    for act in ("gelu", "gelu_new", "relu", "tanh", "linear", "GELU"):
        AlbertConfig(hidden_act=act)


def test_group_index_uses_the_official_float_formula():
    # int(l / L * G): for L=5, G=2 layers 0,1,2 -> group 0, layers 3,4 -> group 1.
    config = AlbertConfig(num_hidden_layers=5, num_hidden_groups=2)
    assert [config.group_index(i) for i in range(5)] == [0, 0, 0, 1, 1]
    for layers in range(1, 50):
        for groups in range(1, layers + 1):
            config = AlbertConfig(num_hidden_layers=layers, num_hidden_groups=groups)
            got = [config.group_index(i) for i in range(layers)]
            assert got == [int(i / layers * groups) for i in range(layers)]
    # The float formula is a real quirk: with L = G = 22 no layer uses group 15
    # (layers 14 and 15 share group 14), so the official graph never creates
    # it. We reproduce that rather than "fix" it.
    config = AlbertConfig(num_hidden_layers=22, num_hidden_groups=22)
    used = {config.group_index(i) for i in range(22)}
    assert 15 not in used and config.group_index(15) == 14


def test_presets_and_aliases():
    from_preset = AlbertConfig.from_preset
    assert from_preset("base") == AlbertConfig(**PRESETS["albert_base_v2"])
    assert from_preset("albert_base_v1").hidden_dropout_prob == 0.1
    assert from_preset("albert_base_v2").hidden_dropout_prob == 0.0
    zh = from_preset("albert_xxlarge_zh")
    assert (zh.vocab_size, zh.hidden_act, zh.num_attention_heads) == (
        21128,
        "relu",
        16,
    )
    assert from_preset("albert_xlarge_v2").num_attention_heads == 32
    assert from_preset("albert_xlarge_v1").num_attention_heads == 16
    for name in list(PRESETS) + list(ALIASES):
        from_preset(name).validate()
    with pytest.raises(ValueError, match="Unknown preset. Received: 'huge'"):
        from_preset("huge")
    # Presets are copies: changing one does not change the table.
    from_preset("base").hidden_size = 1
    assert from_preset("base").hidden_size == 768
    preset_values("base")["hidden_size"] = 1
    assert preset_values("base")["hidden_size"] == 768
    # Overrides change fields and are validated.
    assert from_preset("tiny", vocab_size=60).vocab_size == 60
    with pytest.raises(ValueError, match="num_attention_heads"):
        from_preset("tiny", num_attention_heads=3)


def test_presets_are_data():
    """presets.py holds plain values and imports nothing of ours (no cycle
    with config.py, which builds its configs)."""
    import ast
    import inspect

    import albert_keras.presets

    tree = ast.parse(inspect.getsource(albert_keras.presets))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert imported == ["__future__"]
    for values in PRESETS.values():
        assert all(isinstance(v, (int, float, str)) for v in values.values())
