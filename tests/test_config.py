"""AlbertConfig: lossless official json, validation messages, the group formula."""

import json
import os
import re

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
    # A near miss is named; a path is sent to what loads paths (both were
    # only "Unknown preset" with the list of names).
    with pytest.raises(ValueError, match="Did you mean 'albert_base_v2'"):
        from_preset("albert_bse_v2")
    with pytest.raises(ValueError, match=r"from_preset\(path\)\.config, or Albert"):
        from_preset(os.path.join("runs", "keras_hub_folder"))
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


# --- strict files: required fields, typos, absurd sizes ---------------------
# Keys of released and foreign configs that are no typo of a field: the
# official no-effect fields, transformers' AlbertConfig.to_dict() (5.x, and
# 4.x's generation keys) and a hub config.json, Model Garden's AlbertEncoder,
# BERT's Chinese bert_config.json, brightmart's albert_zh, keras-hub's
# AlbertBackbone.
FOREIGN_KEYS = [
    *("down_scale_factor", "net_structure_type", "layers_to_keep", "gap_size"),
    *("num_memory_blocks", "inner_group_num", "num_hidden_groups"),
    *("_name_or_path", "architectures", "bos_token_id", "eos_token_id"),
    *("pad_token_id", "chunk_size_feed_forward", "classifier_dropout_prob"),
    *("dtype", "torch_dtype", "id2label", "label2id", "is_encoder_decoder"),
    *("layer_norm_eps", "model_type", "output_attentions", "output_hidden_states"),
    *("problem_type", "return_dict", "tie_word_embeddings", "num_labels"),
    *("transformers_version", "position_embedding_type", "tokenizer_class"),
    *("embedding_width", "num_layers", "max_sequence_length", "activation"),
    *("dropout_rate", "attention_dropout_rate", "initializer", "output_dropout"),
    *("directionality", "pooler_fc_size", "pooler_num_attention_heads"),
    *("pooler_num_fc_layers", "pooler_size_per_head", "pooler_type", "ln_type"),
    *("num_heads", "num_groups", "num_inner_repetitions", "num_segments"),
    *("dropout", "hidden_dim", "intermediate_dim", "my_note", "use_bias"),
    *("max_length", "min_length", "do_sample", "num_beams", "temperature"),
    *("top_k", "top_p", "repetition_penalty", "length_penalty", "is_decoder"),
    *("no_repeat_ngram_size", "bad_words_ids", "num_return_sequences"),
    *("forced_bos_token_id", "forced_eos_token_id", "torchscript", "use_cache"),
    *("use_bfloat16", "pruned_heads", "tie_encoder_decoder", "prefix"),
    *("add_cross_attention", "cross_attention_hidden_size", "finetuning_task"),
    *("task_specific_params", "sep_token_id", "decoder_start_token_id"),
    *("output_past", "gradient_checkpointing", "tf_legacy_loss"),
]


def _write(tmp_path, values):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(values))
    return path


@pytest.mark.parametrize(
    "typo, field",
    [
        ("num_hiden_layers", "num_hidden_layers"),
        ("vocab_sise", "vocab_size"),
        ("embeding_size", "embedding_size"),
        ("Hidden_Size", "hidden_size"),
        ("num_attention_head", "num_attention_heads"),
        ("hiden_act", "hidden_act"),
        ("initializer_rang", "initializer_range"),
    ],
)
def test_typo_of_a_field_is_refused_with_a_suggestion(tmp_path, typo, field):
    values = dict(OFFICIAL_V2_BASE)
    values[typo] = values.pop(field)
    path = _write(tmp_path, values)
    expected = f"unknown field `{typo}`, did you mean `{field}`?"
    with pytest.raises(ValueError, match=expected) as info:
        AlbertConfig.from_json_file(path)
    assert str(path) in str(info.value)
    # A dict (not a file) is checked the same way, even with the field present.
    with pytest.raises(ValueError, match=expected):
        AlbertConfig.from_dict(dict(OFFICIAL_V2_BASE, **{typo: 1}))


def test_keys_of_official_and_foreign_configs_are_no_typos(tmp_path):
    """Checked one by one, so a false near miss names its key."""
    for key in FOREIGN_KEYS:
        values = dict(OFFICIAL_V2_BASE, **{key: OFFICIAL_V2_BASE.get(key, 0)})
        config = AlbertConfig.from_json_file(_write(tmp_path, values))
        assert config.to_dict()[key] == values[key], key


@pytest.mark.parametrize("field", ["hidden_size", "hidden_act", "vocab_size"])
def test_file_missing_a_required_field_is_refused(tmp_path, field):
    values = dict(OFFICIAL_V1_BASE)
    del values[field]
    path = _write(tmp_path, values)
    with pytest.raises(ValueError) as info:
        AlbertConfig.from_json_file(path)
    message = str(info.value)
    assert f"missing required field(s) `{field}`" in message
    assert str(path) in message


def test_missing_fields_are_all_named_and_optional_ones_default(tmp_path):
    values = {k: v for k, v in OFFICIAL_V1_BASE.items() if k not in REQUIRED}
    with pytest.raises(ValueError) as info:
        AlbertConfig.from_json_file(_write(tmp_path, values))
    assert ", ".join(f"`{f}`" for f in REQUIRED) in str(info.value)
    # Training-only and no-effect fields may be left out.
    values = {k: v for k, v in OFFICIAL_V1_BASE.items() if k in REQUIRED}
    config = AlbertConfig.from_json_file(_write(tmp_path, values))
    assert config.initializer_range == 0.02 and config.hidden_dropout_prob == 0.0


REQUIRED = (
    *("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers"),
    *("num_attention_heads", "intermediate_size", "num_hidden_groups"),
    *("inner_group_num", "hidden_act", "max_position_embeddings"),
    "type_vocab_size",
)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(hidden_size=-768), "`hidden_size` must be a positive integer"),
        (dict(vocab_size=float("nan")), "vocab_size=nan"),
        (dict(intermediate_size=0), "intermediate_size=0"),
        (dict(hidden_dropout_prob=float("nan")), "in [0, 1)"),
        (dict(attention_probs_dropout_prob=-0.1), "attention_probs_dropout_prob"),
        (dict(attention_probs_dropout_prob=True), "attention_probs_dropout_prob"),
        (dict(initializer_range=float("nan")), "initializer_range=nan"),
        (dict(initializer_range=0), "finite positive float"),
        (dict(initializer_range=float("inf")), "initializer_range=inf"),
    ],
)
def test_nan_negative_and_out_of_range_values_are_refused(tmp_path, changes, message):
    # Through a file: json writes NaN and Infinity, and reads them back.
    path = _write(tmp_path, dict(OFFICIAL_V2_BASE, **changes))
    with pytest.raises(ValueError) as info:
        AlbertConfig.from_json_file(path)
    assert message in str(info.value)


def test_absurd_vocab_size_fails_fast_and_allocates_nothing():
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        AlbertConfig.from_dict(dict(OFFICIAL_V2_BASE, vocab_size=10**10))
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.1
    assert peak < 1_000_000  # bytes: no table was allocated
    message = str(info.value)
    assert "The word embedding table [vocab_size x embedding_size]" in message
    assert "over the 4.0 GB (4e+09 bytes) bound for any single weight" in message
    assert "Check `vocab_size`, `embedding_size`" in message
    assert "vocab_size=10000000000, embedding_size=128" in message


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(max_position_embeddings=10**8), "position embedding table"),
        (dict(hidden_size=40_000, num_attention_heads=1), "attention kernel"),
        (dict(intermediate_size=2 * 10**7), "A feed-forward kernel"),
        # Each weight fits, all of them do not: 200 unshared xxlarge layers.
        (
            dict(
                hidden_size=4096,
                num_attention_heads=64,
                intermediate_size=16384,
                num_hidden_layers=200,
                sharing="none",
            ),
            "over the 40.0 GB (4e+10 bytes) bound",
        ),
    ],
)
def test_absurd_sizes_are_refused_before_allocating(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        AlbertConfig.from_dict(dict(OFFICIAL_V2_BASE, **changes))
    with pytest.raises(ValueError, match=re.escape(message)):
        AlbertConfig().replace(**changes)  # replace() validates again


def test_every_preset_and_the_largest_real_models_still_load(tmp_path):
    for name in list(PRESETS) + list(ALIASES):
        config = AlbertConfig.from_preset(name)
        config.to_json_file(tmp_path / "albert_config.json")
        assert AlbertConfig.from_json_file(tmp_path) == config, name
    # xxlarge unshared (BERT-sized, 24 layers, 19 GB) is big but real.
    AlbertConfig.from_preset(
        "albert_xxlarge_v2", num_hidden_layers=24, sharing="none"
    ).validate()
    for values in (OFFICIAL_V1_BASE, OFFICIAL_V2_BASE, OFFICIAL_ZH_BASE):
        assert AlbertConfig.from_json_file(_write(tmp_path, values)).extra == {}
