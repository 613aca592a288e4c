"""TF2 Hub SavedModels and Model Garden checkpoints, against Model Garden itself.

`tests/data/model_garden/albert_tiny_tf2.tar.gz` was written by Model Garden's
own code (`tests/data/make_model_garden_fixture.py`): a random tiny ALBERT as
a TF1 release (`tf1/`), Model Garden's TF1 -> TF2 conversion of it
(`tf2_checkpoint/`, AlbertEncoder + masked-LM head) and its TF Hub export
(`hub/`, as the `tensorflow/albert_en_*` SavedModels). The references are the
SavedModel's own signatures (Model Garden's graph, run by TensorFlow) and the
TF1 release the others were converted from.
"""

import os
import shutil
import tarfile

import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff

from albert_keras import AlbertConfig
from checkpoints_convert import (
    ConversionError,
    ModelGardenCheckpointReader,
    load_official_checkpoint,
)
from checkpoints_convert.cli import main
from checkpoints_convert.preset_sources import source_kind

FIXTURE = os.path.join(
    os.path.dirname(__file__), "..", "data", "model_garden", "albert_tiny_tf2.tar.gz"
)
IDS = np.array([[2, 10, 20, 30, 3, 0, 0, 0], [2, 50, 60, 3, 70, 80, 99, 3]], "int32")
TYPES = np.array([[0] * 8, [0, 0, 0, 0, 1, 1, 1, 1]], "int32")
MASK = (IDS > 0).astype("int32")
LAYERS = "encoder_outputs"  # a list; the last equals sequence_output
POSITIONS = np.array([[1, 2, 0], [4, 5, 7]], "int32")


@pytest.fixture(scope="module")
def garden(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model_garden")
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(folder, filter="data")
    return {name: str(folder / name) for name in ("tf1", "tf2_checkpoint", "hub")}


@pytest.fixture(scope="module")
def hub_outputs(garden):
    hub = tf.saved_model.load(garden["hub"])
    inputs = dict(input_word_ids=IDS, input_mask=MASK, input_type_ids=TYPES)
    outputs = {k: np.asarray(v) for k, v in hub(inputs).items() if k != LAYERS}
    mlm = hub.mlm(dict(inputs, masked_lm_positions=POSITIONS))
    outputs["mlm_logits"] = np.asarray(mlm["mlm_logits"])
    return outputs


def release_config(garden):
    return os.path.join(garden["tf1"], "albert_config.json")


def ours(model):
    return model({"token_ids": IDS, "segment_ids": TYPES, "padding_mask": MASK})


def test_tf2_hub_savedmodel_gives_the_savedmodels_outputs(garden, hub_outputs):
    backbone = load_official_checkpoint(garden["hub"])
    outputs = ours(backbone)
    for key in ("sequence_output", "pooled_output"):
        assert max_abs_diff(outputs[key], hub_outputs[key]) <= 2e-6, key
    report = backbone.conversion_report
    assert report.prefix_choice == "SavedModel variables"
    assert report.config_source.endswith("keras_metadata.pb")
    assert report.vocab_path.endswith(os.path.join("assets", "30k-clean.model"))


def test_tf2_hub_masked_lm_head_gives_the_savedmodels_logits(garden, hub_outputs):
    with pytest.warns(UserWarning, match="no sop head"):  # Model Garden has none
        pretrainer = load_official_checkpoint(garden["hub"], model="pretrainer")
    logits = pretrainer(
        {
            "token_ids": IDS,
            "segment_ids": TYPES,
            "padding_mask": MASK,
            "mask_positions": POSITIONS,
        }
    )["mlm_logits"]
    assert max_abs_diff(logits, hub_outputs["mlm_logits"]) <= 1e-5
    assert pretrainer.conversion_report.new_heads == ("sop",)


@pytest.mark.parametrize("source", ["hub", "tf2_checkpoint"])
def test_weights_equal_the_tf1_release_they_were_converted_from(garden, source):
    release = load_official_checkpoint(garden["tf1"], model="pretrainer")
    config = release_config(garden)
    with pytest.warns(UserWarning, match="no sop head"):
        model = load_official_checkpoint(garden[source], "pretrainer", config=config)
    for ours_, theirs in zip(model.weights, release.weights, strict=True):
        assert ours_.path == theirs.path
        if not ours_.path.startswith("sop_head"):
            assert max_abs_diff(ours_, theirs) == 0.0, ours_.path
    if source == "tf2_checkpoint":
        assert model.conversion_report.ignored == ("save_counter",)


def test_config_read_from_the_savedmodel_equals_the_release_config(garden):
    read = ModelGardenCheckpointReader(garden["hub"]).load_config()
    release = AlbertConfig.from_json_file(release_config(garden))
    assert read == release.replace(initializer_range=read.initializer_range)
    assert read.num_hidden_layers == 3 and read.hidden_act == "gelu"


def test_kinds_and_the_cli(garden, tmp_path, capsys):
    assert source_kind(garden["hub"]) == "model_garden"
    assert source_kind(garden["tf2_checkpoint"]) == "model_garden"
    assert source_kind(garden["tf1"]) == "official"
    out = str(tmp_path / "hub.keras")
    assert main([garden["hub"], "--model", "backbone", "--output", out]) == 0
    err = capsys.readouterr().err
    assert "AlbertBackbone: loaded 25 variables" in err and f"wrote {out}" in err


def test_a_checkpoint_without_config_is_refused_with_the_fix(garden):
    with pytest.raises(FileNotFoundError, match="No albert_config.json.*config="):
        load_official_checkpoint(garden["tf2_checkpoint"])


def test_a_config_with_other_heads_is_refused(garden):
    config = AlbertConfig.from_json_file(release_config(garden))
    with pytest.raises(ConversionError, match="has 2 attention heads.*config 4"):
        load_official_checkpoint(
            garden["hub"], config=config.replace(num_attention_heads=4)
        )


def test_an_object_based_checkpoint_of_another_model_is_refused(tmp_path):
    # A Model Garden BERT has ALBERT's embedding names but no shared layer.
    names = ("word_embeddings/embeddings", "transformer/layer_0/output/kernel")
    variables = {f"v{i}": tf.Variable(tf.zeros((2, 2)), name=n) for i, n in
                 enumerate(names)}  # fmt: skip
    prefix = tf.train.Checkpoint(**variables).write(str(tmp_path / "bert" / "ckpt"))
    with pytest.raises(ConversionError, match="not of a Model Garden ALBERT encoder"):
        load_official_checkpoint(prefix)


def test_a_savedmodel_albert_keras_exported_is_told_to_convert_its_keras_file(
    tmp_path,
):
    from albert_keras import AlbertBackbone

    backbone = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=60))
    backbone.export(str(tmp_path / "served"), verbose=False)
    with pytest.raises(ConversionError, match="albert-keras exported.*the .keras"):
        load_official_checkpoint(str(tmp_path / "served"))


def test_a_savedmodel_without_its_variables_data_is_refused(garden, tmp_path):
    hub = str(tmp_path / "hub")
    shutil.copytree(garden["hub"], hub)
    os.remove(os.path.join(hub, "variables", "variables.data-00000-of-00001"))
    with pytest.raises(ConversionError, match="is missing"):
        load_official_checkpoint(hub)


def test_a_savedmodel_without_keras_metadata_needs_a_config(garden, tmp_path):
    hub = str(tmp_path / "hub")
    shutil.copytree(garden["hub"], hub)
    os.remove(os.path.join(hub, "keras_metadata.pb"))  # saved_model.pb has none here
    with pytest.raises(ConversionError, match="no AlbertEncoder config.*config="):
        load_official_checkpoint(hub)
    config = release_config(garden)
    backbone = load_official_checkpoint(hub, config=config)
    assert backbone.conversion_report.config_source == config


def test_the_2020_transformer_names_of_the_first_tf2_hub_exports(garden, tmp_path):
    # Model Garden's 2020 `layers.Transformer` (AlbertTransformerEncoder, the
    # first TF2 Hub exports) named the attention output `self_attention_output`;
    # the same values saved under those names, in another object graph.
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    reader = tf.train.load_checkpoint(garden["tf2_checkpoint"] + "/ckpt-1")
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    old = {}
    for attribute in (a for node in graph.nodes for a in node.attributes):
        name = attribute.full_name.replace(
            "self_attention/attention_output", "self_attention_output"
        )
        value = reader.get_tensor(attribute.checkpoint_key)
        old[f"v{len(old)}"] = tf.Variable(value, name=name)
    prefix = tf.train.Checkpoint(**old).write(str(tmp_path / "old" / "ckpt-1"))
    release = load_official_checkpoint(garden["tf1"])
    backbone = load_official_checkpoint(prefix, config=release_config(garden))
    for ours_, theirs in zip(backbone.weights, release.weights, strict=True):
        assert max_abs_diff(ours_, theirs) == 0.0, ours_.path
