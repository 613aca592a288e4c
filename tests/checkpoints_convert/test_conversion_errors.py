"""Bad checkpoints and configs: errors that name the variable and the cause.

The head count cannot be seen in the weights (2-D kernels), so a wrong
`num_attention_heads` is not detectable; the tests use what is.
"""

import json
import os
import shutil
import warnings

import numpy as np
import pytest
import tensorflow as tf

from albert_keras import AlbertBackbone, AlbertConfig
from checkpoints_convert import (
    CheckpointReader,
    ConversionError,
    load_official_checkpoint,
    save_official_checkpoint,
)

LAYER_NORM_1 = "bert/encoder/transformer/group_0/inner_group_0/LayerNorm_1/gamma"


def write_checkpoint(prefix, variables):
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    names = sorted(variables)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(np.asarray(variables[n], "float32")) for n in names],
    )
    return prefix


def official_config(official, case="all_shared"):
    with open(os.path.join(official[case], "albert_config.json")) as f:
        return json.load(f)


def edited_copy(official, tmp_path, change, case="all_shared"):
    """The case's variables, changed by `change(dict)`, with its config."""
    reader = CheckpointReader(official[case])
    variables = {name: reader.read(name) for name in reader.names}
    change(variables)
    folder = tmp_path / "edited"
    write_checkpoint(str(folder / "model.ckpt-best"), variables)
    shutil.copy(
        os.path.join(official[case], "albert_config.json"),
        folder / "albert_config.json",
    )
    return str(folder)


def test_wrong_vocab_size_names_the_config_field(official):
    config = official_config(official)
    config["vocab_size"] += 3
    with pytest.raises(ConversionError) as info:
        load_official_checkpoint(official["all_shared"], "pretrainer", config=config)
    message = str(info.value)
    assert "shape mismatch for 'bert/embeddings/word_embeddings'" in message
    assert "config `vocab_size` is 103 here, 100 in the checkpoint" in message
    assert "'cls/predictions/output_bias'" in message  # the MLM bias too


def test_wrong_embedding_size_names_the_config_field(official):
    config = official_config(official)
    config["embedding_size"] = 8
    with pytest.raises(ConversionError, match="config `embedding_size` is 8 here"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_missing_variable(official, tmp_path):
    folder = edited_copy(official, tmp_path, lambda v: v.pop(LAYER_NORM_1))
    with pytest.raises(ConversionError, match=f"missing variable '{LAYER_NORM_1}'"):
        load_official_checkpoint(folder)


@pytest.mark.parametrize(
    "name",
    [
        "bert/encoder/embedding_hidden_mapping_in/kernel",
        "bert/encoder/transformer/group_0/inner_group_0/ffn_1/intermediate/dense/kernel",
    ],
)
def test_transposed_kernel(official, tmp_path, name):
    def transpose(variables):
        variables[name] = variables[name].T

    folder = edited_copy(official, tmp_path, transpose)
    with pytest.raises(ConversionError, match=f"'{name}' looks transposed"):
        load_official_checkpoint(folder)


def test_more_groups_than_the_config(official, tmp_path):
    def extra_group(variables):
        for name in list(variables):
            if "/group_0/" in name:
                variables[name.replace("/group_0/", "/group_1/")] = variables[name]

    folder = edited_copy(official, tmp_path, extra_group)
    with pytest.raises(ConversionError) as info:
        load_official_checkpoint(folder)
    message = str(info.value)
    assert "more groups than the config's num_hidden_groups=1" in message
    assert "(and 15 more like it)" in message  # one line, not sixteen


def test_fewer_groups_than_the_config(official):
    config = official_config(official, "all_shared")
    config["num_hidden_groups"] = 3
    with pytest.raises(ConversionError, match="the checkpoint has groups \\[0\\]"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_more_inner_groups_than_the_config(official):
    config = official_config(official, "inner_groups_2")
    config["inner_group_num"] = 1
    with pytest.raises(ConversionError, match="more inner groups than the config"):
        load_official_checkpoint(official["inner_groups_2"], config=config)


def test_projection_without_embedding_size(official):
    config = official_config(official, "all_shared")
    config["embedding_size"] = config["hidden_size"]
    with pytest.raises(ConversionError, match="check embedding_size"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_multiple_choice_head_on_a_classifier_checkpoint(official):
    with pytest.raises(ConversionError, match="multiple-choice head's single score"):
        load_official_checkpoint(official["v1_dropout_classifier"], "multiple_choice")


def test_unknown_activation_in_config(official):
    config = official_config(official)
    config["hidden_act"] = "swish"
    with pytest.raises(ConversionError, match="hidden_act='swish'"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_tf2_object_based_checkpoint(tmp_path):
    name = "model/layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE"
    write_checkpoint(str(tmp_path / "tf2" / "ckpt-1"), {name: np.zeros((2, 2))})
    with pytest.raises(ConversionError, match="object-based TF2 checkpoint"):
        load_official_checkpoint(str(tmp_path / "tf2"))


def test_unshared_tf2_names(tmp_path):
    name = "bert/encoder/transformer/group_0_9/inner_group_0/LayerNorm/beta"
    write_checkpoint(str(tmp_path / "u" / "model.ckpt"), {name: np.zeros(2)})
    with pytest.raises(ConversionError, match="un-shared TF2 names.*albert#241"):
        load_official_checkpoint(str(tmp_path / "u"))


@pytest.mark.parametrize(
    "name",
    [
        "bert/encoder/layer_shared/attention/self/query/kernel",
        "bert/embeddings/word_embeddings_2",
    ],
)
def test_brightmart_layout(tmp_path, name):
    write_checkpoint(str(tmp_path / "b" / "albert_model.ckpt"), {name: np.zeros(2)})
    with pytest.raises(ConversionError, match="brightmart layout is not supported yet"):
        load_official_checkpoint(str(tmp_path / "b"))


def test_folder_without_checkpoint(tmp_path):
    (tmp_path / "albert_config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"no \*\.index file"):
        load_official_checkpoint(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="No checkpoint at"):
        load_official_checkpoint(str(tmp_path / "nope"))


def test_checkpoint_without_config(official, tmp_path):
    reader = CheckpointReader(official["all_shared"])
    variables = {name: reader.read(name) for name in reader.names}
    write_checkpoint(str(tmp_path / "x" / "model.ckpt-best"), variables)
    with pytest.raises(FileNotFoundError, match="No albert_config.json beside"):
        load_official_checkpoint(str(tmp_path / "x"))
    # An explicit config (a path) works, and so does an .index path.
    config = os.path.join(official["all_shared"], "albert_config.json")
    index = str(tmp_path / "x" / "model.ckpt-best.index")
    model = load_official_checkpoint(index, config=config)
    assert model.conversion_report.config_source == config


def test_several_checkpoints_pick_best_or_highest_step(official, tmp_path):
    reader = CheckpointReader(official["all_shared"])
    variables = {name: reader.read(name) for name in reader.names}
    for step in (100, 2000, 300):
        write_checkpoint(str(tmp_path / "t" / f"model.ckpt-{step}"), variables)
    with pytest.warns(UserWarning, match=r"using model.ckpt-2000 \(the highest step"):
        assert CheckpointReader(str(tmp_path / "t")).prefix.endswith("ckpt-2000")
    write_checkpoint(str(tmp_path / "t" / "model.ckpt-best"), variables)
    with pytest.warns(
        UserWarning, match=r"using model.ckpt-best \(the best one, by its name"
    ):
        assert CheckpointReader(str(tmp_path / "t")).prefix.endswith("ckpt-best")


def test_xlarge_head_count_warning(official):
    config = AlbertConfig.from_preset(
        "albert_xlarge_v2", vocab_size=100, intermediate_size=64
    )
    with pytest.warns(UserWarning, match="albert#180.*num_attention_heads=32"):
        # xlarge-shaped but not the checkpoint's size: warned, then refused.
        with pytest.raises(ConversionError, match="config `hidden_size` is 2048"):
            load_official_checkpoint(official["all_shared"], config=config)


def test_no_warning_for_other_sizes(official):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_official_checkpoint(official["all_shared"])


@pytest.mark.parametrize("sharing", ["attention", "ffn"])
def test_partial_sharing_has_no_official_layout(official, tmp_path, sharing):
    backbone = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", sharing=sharing))
    with pytest.raises(ConversionError, match=f"sharing='{sharing}' cannot be"):
        save_official_checkpoint(backbone, str(tmp_path / "m" / "model.ckpt"))
    assert not (tmp_path / "m").exists()  # refused before writing anything
    config = official_config(official)
    config["sharing"] = sharing
    with pytest.raises(ConversionError, match="cannot be expressed"):
        load_official_checkpoint(official["all_shared"], config=config)


def test_unknown_model_name(official):
    with pytest.raises(ConversionError, match="Allowed: backbone, pretrainer"):
        load_official_checkpoint(official["all_shared"], model="ner")


def test_pretraining_head_missing_starts_fresh_with_a_warning(official, tmp_path):
    """TF1 Hub modules without the SOP head (transformers#12196) still load."""

    def drop_sop(variables):
        for name in list(variables):
            if name.startswith("cls/seq_relationship/"):
                del variables[name]

    folder = edited_copy(official, tmp_path, drop_sop)
    with pytest.warns(UserWarning, match="no sop head"):
        model = load_official_checkpoint(folder, "pretrainer")
    assert model.conversion_report.new_heads == ("sop",)


def test_partial_head_is_an_error(official, tmp_path):
    folder = edited_copy(
        official, tmp_path, lambda v: v.pop("output_bias"), "v1_dropout_classifier"
    )
    with pytest.raises(ConversionError, match="missing variable 'output_bias'"):
        load_official_checkpoint(folder, "classifier")


# --- damaged files: errors that name the file (and the variable) ------------
WORD_EMBEDDINGS = "bert/embeddings/word_embeddings"
LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 46747112\n"
)


def release_copy(official, tmp_path):
    """(folder, prefix) of an intact copy of the all_shared release."""
    folder = edited_copy(official, tmp_path, lambda variables: None)
    return folder, os.path.join(folder, "model.ckpt-best")


def test_truncated_data_file_is_refused_before_reading(official, tmp_path):
    folder, prefix = release_copy(official, tmp_path)
    data = prefix + ".data-00000-of-00001"
    size = os.path.getsize(data)
    with open(data, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(ConversionError) as info:
        load_official_checkpoint(folder)
    assert str(info.value) == (
        f"'{data}' is truncated: {size // 2} bytes, but '{prefix}.index' lists "
        f"{size} bytes of variables; copy or download the checkpoint again."
    )


def test_data_file_as_a_git_lfs_pointer(official, tmp_path):
    folder, prefix = release_copy(official, tmp_path)
    data = prefix + ".data-00000-of-00001"
    with open(data, "wb") as f:
        f.write(LFS_POINTER)
    with pytest.raises(ConversionError, match="a Git LFS pointer, not the weights"):
        load_official_checkpoint(folder)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_unreadable_variable_names_itself_and_the_file(official, tmp_path, damage):
    """Damage after the reader opened the files (the size check passed): the
    read itself fails, and the error says which variable from which file."""
    folder, prefix = release_copy(official, tmp_path)
    reader = CheckpointReader(folder)
    data = prefix + ".data-00000-of-00001"
    content = open(data, "rb").read()
    with open(data, "wb") as f:
        if damage == "truncate":  # today: IndexError: Read less bytes than requested
            f.write(content[:10])
        else:  # same length, wrong bytes: the checksums fail
            f.write(bytes(b ^ 0xFF for b in content))
    with pytest.raises(ConversionError) as info:
        reader.read(WORD_EMBEDDINGS)
    message = str(info.value)
    assert message.startswith(
        f"Cannot read '{WORD_EMBEDDINGS}' [100, 16] from '{data}'"
    )
    assert "truncated or corrupt; copy or download the checkpoint again" in message


def test_missing_data_file(official, tmp_path):
    folder, prefix = release_copy(official, tmp_path)
    os.remove(prefix + ".data-00000-of-00001")
    with pytest.raises(ConversionError) as info:
        load_official_checkpoint(folder)
    assert str(info.value) == (
        f"'{prefix}.data-00000-of-00001' is missing: '{prefix}.index' lists "
        "variables stored there. Copy or download the checkpoint's .data-* "
        "files beside its .index."
    )


def test_missing_index_file(official, tmp_path):
    folder, prefix = release_copy(official, tmp_path)
    os.remove(prefix + ".index")
    data = prefix + ".data-00000-of-00001"
    expected = (
        f"'{prefix}.index' is missing: '{data}' holds the weights, but only "
        "with its .index can they be read. Copy the .index file of the "
        "checkpoint beside it (release tars and hub modules have both)."
    )
    # The folder, the prefix, the .data file and the .index path all say so.
    for path in (folder, prefix, data, prefix + ".index"):
        with pytest.raises(ConversionError) as info:
            load_official_checkpoint(path)
        assert str(info.value) == expected, path


@pytest.mark.parametrize(
    "corrupt, cause",
    [
        # Bytes of the entries changed: today an IndexError from TensorFlow.
        (lambda b: b[:10] + bytes(x ^ 0x5A for x in b[10:-10]) + b[-10:], None),
        (lambda b: b[:-48] + bytes(48), "not an sstable (bad magic number)"),
        (lambda b: b[:20], "file is too short to be an sstable"),
        (lambda b: b"", "file is too short to be an sstable"),
    ],
    ids=["entries", "footer", "short", "empty"],
)
def test_corrupt_index_file(official, tmp_path, corrupt, cause):
    folder, prefix = release_copy(official, tmp_path)
    index = prefix + ".index"
    with open(index, "rb") as f:
        content = f.read()
    with open(index, "wb") as f:
        f.write(corrupt(content))
    with pytest.raises(ConversionError) as info:
        load_official_checkpoint(folder)
    message = str(info.value)
    assert message.startswith(f"Cannot read the checkpoint index '{index}' (")
    assert message.endswith(
        "): the file is corrupt, truncated or not a TF checkpoint index; copy "
        "or download the checkpoint again."
    )
    if cause:
        assert f"({cause})" in message


def test_index_file_as_a_git_lfs_pointer(official, tmp_path):
    folder, prefix = release_copy(official, tmp_path)
    with open(prefix + ".index", "wb") as f:
        f.write(LFS_POINTER)
    with pytest.raises(ConversionError, match="a Git LFS pointer, not the index"):
        load_official_checkpoint(folder)


def test_cli_warnings_are_one_plain_line_each(official, tmp_path, capsys):
    """`albert-convert` printed a loader's warning in Python's form (file,
    line, source line), and the missing-head one beside the summary's
    "newly initialized: sop" line that says the same."""
    from checkpoints_convert.cli import main

    def drop_sop(variables):
        for name in list(variables):
            if name.startswith("cls/seq_relationship/"):
                del variables[name]

    folder = edited_copy(official, tmp_path, drop_sop)
    for name in os.listdir(folder):  # a second checkpoint: the choice is told
        if name.startswith("model.ckpt-best."):
            shutil.copy(
                os.path.join(folder, name),
                os.path.join(folder, "model.ckpt-7." + name.split(".", 2)[2]),
            )
    assert main([folder, "--output", str(tmp_path / "p.keras")]) == 0
    err = capsys.readouterr().err
    assert "albert-convert: warning: 2 checkpoints in " in err
    assert "using model.ckpt-best (the best one, by its name)" in err
    assert "newly initialized: sop" in err
    assert "no sop head" not in err and "UserWarning" not in err and ".py:" not in err
