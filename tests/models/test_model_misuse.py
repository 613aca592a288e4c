"""What a Keras or keras-hub user may try that the models refuse, by name and fix."""

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
)

CONFIG = micro_config(vocab_size=60)


@pytest.fixture(scope="module")
def backbone():
    return AlbertBackbone(CONFIG)


class _KerasHubBackbone:
    """Stands for `keras_hub.models.AlbertBackbone` (the module is what counts)."""

    __module__ = "keras_hub.src.models.albert.albert_backbone"


@pytest.mark.parametrize(
    "task", [AlbertClassifier, AlbertSpanQA, AlbertSquadV2, AlbertPretrainer]
)
def test_task_models_refuse_what_is_no_backbone(task):
    """They failed with "'AlbertBackbone' object has no attribute 'config'"
    (keras-hub's backbone) or "'str' object has no attribute 'config'"."""
    with pytest.raises(TypeError, match=r"save_to_preset\(folder\).*from_preset"):
        task(_KerasHubBackbone())
    with pytest.raises(TypeError, match=r"Received: builtins.str 'albert_tiny'"):
        task("albert_tiny")


def test_numpy_integers_count_classes_and_choices_bools_do_not(backbone):
    """`num_classes=np.int64(3)` (as `len(np.unique(labels))` gives) was
    refused as no positive integer; `num_classes=True` built one class."""
    model = AlbertClassifier(backbone, num_classes=np.int64(3))
    assert type(model.get_config()["num_classes"]) is int
    assert model.output["logits"].shape == (None, 3)
    with pytest.raises(ValueError, match="num_classes=True"):
        AlbertClassifier(backbone, num_classes=True)
    choices = AlbertMultipleChoice(backbone, num_choices=np.int32(2))
    assert type(choices.get_config()["num_choices"]) is int


def test_enable_lora_twice_says_so():
    """The second call failed in Keras's Dense ("lora is already enabled.
    This can only be done once per layer"), after unfreezing nothing."""
    backbone = AlbertBackbone(CONFIG)
    backbone.enable_lora(2)
    with pytest.raises(ValueError, match=r"already enabled on this backbone \(rank 2"):
        backbone.enable_lora(4)
    assert len(backbone.trainable_weights) == 4  # still the first adapters only


def test_backbone_given_a_path_points_to_from_preset():
    """`AlbertBackbone("my_preset/")` said "Unknown preset" with our names
    only, not how to load a folder."""
    fix = r"AlbertBackbone\.from_preset\('my_preset/'\)"
    with pytest.raises(ValueError, match=fix):
        AlbertBackbone("my_preset/")


@pytest.mark.parametrize(
    "preset",
    ["albert_base_en_uncased", "kaggle://keras/albert/keras/albert_base_en_uncased/5"],
)
def test_keras_hub_names_are_refused_with_the_way(preset):
    """They gave "Cannot tell what ... is: found nothing (no such file or
    folder)", as if the name were a typo."""
    with pytest.raises(ValueError, match=r"downloads nothing.*save_to_preset"):
        AlbertBackbone.from_preset(preset)
    with pytest.raises(ValueError, match="keras_hub.models.AlbertBackbone"):
        AlbertClassifier.from_preset(preset, num_classes=2)


def test_a_url_is_refused_with_the_download():
    """The release URL itself said "Cannot tell what ... is: found nothing"."""
    url = "https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz"
    with pytest.raises(ValueError, match=rf"is a URL.*curl -LO {url}"):
        AlbertBackbone.from_preset(url)


def test_the_fixed_models_compute_as_before(backbone):
    """The checks change no numbers: a NumPy class count, same logits."""
    x = random_inputs(batch=2, length=8, vocab=60)
    a = AlbertClassifier(backbone, num_classes=np.int64(2))
    b = AlbertClassifier(backbone, num_classes=2)
    b.set_weights(a.get_weights())
    assert max_abs_diff(a(x)["logits"], b(x)["logits"]) == 0.0
    assert keras.ops.shape(a(x)["logits"]) == (2, 2)


class _KerasHubTokenizer:
    """Stands for a keras-hub SentencePiece tokenizer: a vocabulary size, no
    `special_token_ids`."""

    __module__ = "keras_hub.src.tokenizers.sentence_piece_tokenizer"

    def vocabulary_size(self):
        return 30000


def test_with_tokenizer_refuses_a_keras_hub_tokenizer(backbone):
    """It failed in the packer: "list indices must be integers or slices,
    not str"."""
    from albert_keras.models import with_tokenizer

    model = AlbertClassifier(backbone, num_classes=2)
    with pytest.raises(TypeError, match=r"keras-hub's tokenizers.*vocabulary\.spm"):
        with_tokenizer(model, _KerasHubTokenizer(), 16)


def test_span_text_model_names_the_default_query_length():
    """`with_tokenizer(AlbertSpanQA(...), tokenizer, 64)` failed in the
    packer with "Received: max_query_length=64", a value not written."""
    from albert_keras.models import with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH

    config = micro_config(vocab_size=8000, max_position_embeddings=64)
    model = AlbertSpanQA(AlbertBackbone(config))
    with pytest.raises(
        ValueError, match=r"=64 \(the official default\).*max_query_length=16"
    ):
        with_tokenizer(model, SPM_MODEL_PATH, 64)


def test_enable_lora_takes_keras_hub_target_layer_names():
    """keras-hub's `backbone.enable_lora(rank, target_layer_names=[...])` was
    "unexpected keyword argument 'target_layer_names'"; its default names
    adapt the same query and value kernels as ours."""
    backbone = AlbertBackbone(CONFIG)
    hub_default = ["query_dense", "value_dense", "query", "value"]
    assert backbone.enable_lora(2, target_layer_names=hub_default) == 2 * (16 + 16) * 2
    other = AlbertBackbone(CONFIG)
    x = random_inputs(batch=2, length=8, vocab=60)
    before = other(x)["sequence_output"]
    # Both "output" layers (attention and FFN), and the key: B starts at zero.
    count = other.enable_lora(2, target_layer_names=["key", "output"])
    assert count == 2 * (16 + 16) + 2 * (16 + 16) + 2 * (32 + 16)
    assert max_abs_diff(other(x)["sequence_output"], before) == 0.0
    paths = sorted(w.path for w in other.trainable_weights)
    assert [p.rsplit("/", 2)[-2] for p in paths[::2]] == ["key", "output", "output"]
    with pytest.raises(ValueError, match=r"among query, key.*Received: \['keys'\]"):
        AlbertBackbone(CONFIG).enable_lora(2, target_layer_names=["keys"])
    with pytest.raises(ValueError, match=r"embeddings/projection is \(8, 16\)"):
        AlbertBackbone(CONFIG).enable_lora(8, target_layer_names=["projection"])


def test_a_misspelt_preset_name_is_named_with_the_aliases():
    """`AlbertBackbone("bse")` listed the full names only, not `base`."""
    with pytest.raises(ValueError, match=r"'bse'\. Did you mean 'base'\?.*, tiny, x"):
        AlbertBackbone("bse")


def test_a_dtype_policy_that_is_no_float_is_refused():
    """`AlbertBackbone(..., dtype="int32")` failed in a weight initializer with
    "Cannot convert 0.0 to EagerTensor of dtype int32"."""
    with pytest.raises(ValueError, match=r"give dtype= a float policy .*dtype='int32'"):
        AlbertBackbone("albert_tiny", dtype="int32")
    with pytest.raises(ValueError, match="Unknown dtype policy 'foo'"):
        AlbertBackbone("albert_tiny", dtype="foo")
    assert AlbertBackbone("albert_tiny", dtype="mixed_bfloat16").compute_dtype == (
        "bfloat16"
    )


def _ids(**changes):
    x = {k: np.ones((2, 5), "int32") for k in ("token_ids", "padding_mask")}
    x["segment_ids"] = np.zeros((2, 5), "int32")
    x["mask_positions"] = np.array([[1, 2], [3, 4]])
    return {**x, **changes}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"mask_positions": np.array([[1, 2], [3, -1]])}, r"holds -1 at \[1, 1\]"),
        ({"mask_positions": np.array([[1, 5], [3, 4]])}, r"from 0 to 4 \(the seq"),
        ({"token_ids": np.full((2, 5), 60)}, r"from 0 to 59 \(the vocabulary size"),
        ({"segment_ids": np.full((2, 5), 2)}, r"segment_ids holds 2 .* use 0 for"),
    ],
)
def test_ids_outside_the_tables_are_refused(backbone, changes, message):
    """TensorFlow failed with a raw GatherV2 error deep in the graph, and a
    negative position was taken as counted from the end (no error at all);
    JAX clamps too large an index (test_other_backends)."""
    model = AlbertPretrainer(backbone)
    model.compile(optimizer="adam", loss=None)
    x = _ids(**changes)
    for run in (model, model.predict, model.evaluate):
        with pytest.raises(ValueError, match=message):
            run(x)
    listed = {k: v.tolist() for k, v in x.items()}
    with pytest.raises(ValueError, match=message):
        model(listed)
    with pytest.raises(ValueError, match=message):
        model.fit(_ids(), validation_data=(x,), epochs=1, verbose=0)


def test_ids_inside_the_tables_compute_as_before(backbone):
    """The check takes nothing away: the same logits as the layers' own call."""
    model = AlbertPretrainer(backbone)
    x = _ids(token_ids=np.array([[0, 59, 3, 4, 5]] * 2))
    got = model(x)["mlm_logits"]
    direct = keras.Model.__call__(model, x)["mlm_logits"]
    assert max_abs_diff(got, direct) == 0.0


def test_squad_v2_start_positions_outside_the_sequence_are_refused(backbone):
    """The training head gathers the start's state at `start_positions`: -1
    took the last token's, with no error."""
    model = AlbertSquadV2(backbone)
    x = _ids()
    del x["mask_positions"]
    x["p_mask"] = np.zeros((2, 5), "float32")
    x["start_positions"] = np.array([0, 3])
    model(x, training=True)
    x["start_positions"] = np.array([0, -1])
    with pytest.raises(ValueError, match=r"start_positions holds -1 at \[1\]"):
        model(x, training=True)
