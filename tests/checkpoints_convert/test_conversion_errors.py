"""Bad checkpoints and configs give errors that name the variable and the cause."""

import json
import os
import shutil
import warnings

import numpy as np
import pytest
import tensorflow as tf

from checkpoints_convert import OfficialCheckpoint, load_official_checkpoint


def write_checkpoint(prefix, variables):
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    names = sorted(variables)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(np.asarray(variables[n], "float32")) for n in names],
    )


def official_variables(folder):
    checkpoint = OfficialCheckpoint(folder)
    return {n: checkpoint.read(n) for n in checkpoint.names}


def copy_with(official, tmp_path, change):
    variables = official_variables(official["all_shared"])
    change(variables)
    folder = tmp_path / "ckpt"
    write_checkpoint(str(folder / "model.ckpt-best"), variables)
    shutil.copy(
        os.path.join(official["all_shared"], "albert_config.json"),
        folder / "albert_config.json",
    )
    return str(folder)


def test_wrong_vocab_size_names_the_config_field(official, tmp_path):
    config = json.load(open(os.path.join(official["all_shared"], "albert_config.json")))
    config["vocab_size"] += 3
    with pytest.raises(ValueError) as info:
        load_official_checkpoint(official["all_shared"], config=config)
    message = str(info.value)
    assert "'bert/embeddings/word_embeddings'" in message
    assert "vocab_size" in message


def test_missing_variable(official, tmp_path):
    name = "bert/encoder/transformer/group_0/inner_group_0/LayerNorm_1/gamma"
    folder = copy_with(official, tmp_path, lambda v: v.pop(name))
    with pytest.raises(ValueError, match=f"missing variable '{name}'"):
        load_official_checkpoint(folder)


def test_transposed_kernel(official, tmp_path):
    name = "bert/encoder/embedding_hidden_mapping_in/kernel"

    def transpose(v):
        v[name] = v[name].T

    folder = copy_with(official, tmp_path, transpose)
    with pytest.raises(ValueError, match=f"'{name}'.*the kernel is transposed"):
        load_official_checkpoint(folder)


def test_more_groups_than_the_config(official, tmp_path):
    def extra_group(v):
        for name in list(v):
            if "/group_0/" in name:
                v[name.replace("/group_0/", "/group_1/")] = v[name]

    folder = copy_with(official, tmp_path, extra_group)
    with pytest.raises(
        ValueError, match="more groups than the config's num_hidden_groups=1"
    ):
        load_official_checkpoint(folder)


def test_unknown_activation_in_config(official):
    config = json.load(open(os.path.join(official["all_shared"], "albert_config.json")))
    config["hidden_act"] = "swish"
    with pytest.raises(ValueError, match="hidden_act='swish'"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_tf2_object_based_checkpoint(tmp_path):
    write_checkpoint(
        str(tmp_path / "tf2" / "ckpt-1"),
        {
            "layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE": np.zeros(
                (2, 2)
            )
        },
    )
    with pytest.raises(ValueError, match="object-based TF2 checkpoint"):
        load_official_checkpoint(str(tmp_path / "tf2"))


def test_unshared_tf2_names(tmp_path):
    write_checkpoint(
        str(tmp_path / "u" / "model.ckpt"),
        {
            "bert/encoder/transformer/group_0_9/inner_group_0/LayerNorm/beta": np.zeros(
                2
            )
        },
    )
    with pytest.raises(ValueError, match="albert#241"):
        load_official_checkpoint(str(tmp_path / "u"))


def test_brightmart_layout(tmp_path):
    write_checkpoint(
        str(tmp_path / "b" / "albert_model.ckpt"),
        {"bert/encoder/layer_shared/attention/self/query/kernel": np.zeros((2, 2))},
    )
    with pytest.raises(ValueError, match="brightmart"):
        load_official_checkpoint(str(tmp_path / "b"))


def test_folder_without_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no \*\.index file"):
        load_official_checkpoint(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="No checkpoint at"):
        load_official_checkpoint(str(tmp_path / "nope"))


def test_config_without_release_file(official, tmp_path):
    variables = official_variables(official["all_shared"])
    write_checkpoint(str(tmp_path / "x" / "model.ckpt-best"), variables)
    with pytest.raises(FileNotFoundError, match="No albert_config.json"):
        load_official_checkpoint(str(tmp_path / "x"))


def test_several_checkpoints_pick_best_or_highest_step(official, tmp_path):
    variables = official_variables(official["all_shared"])
    for step in (100, 2000, 300):
        write_checkpoint(str(tmp_path / "t" / f"model.ckpt-{step}"), variables)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint = OfficialCheckpoint(str(tmp_path / "t"))
    assert checkpoint.prefix.endswith("model.ckpt-2000")
    assert any("using model.ckpt-2000" in str(w.message) for w in caught)


def test_xlarge_head_count_warning(tmp_path):
    from albert_keras import AlbertConfig
    from checkpoints_convert.converter import _warn_head_count

    with pytest.warns(UserWarning, match="pages 16.*num_attention_heads=32"):
        _warn_head_count(AlbertConfig.from_preset("albert_xlarge_v2"))


def test_partial_sharing_cannot_be_written(tmp_path):
    from albert_keras import AlbertBackbone, AlbertConfig
    from checkpoints_convert import save_official_checkpoint

    backbone = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", sharing="ffn"))
    with pytest.raises(ValueError, match="cannot be written in the official"):
        save_official_checkpoint(backbone, str(tmp_path / "m" / "model.ckpt"))
