"""Hugging Face transformers ALBERT folders: read and written exactly.

Three independent references: the official TF1 code (every oracle case goes
official checkpoint -> ours -> transformers folder -> ours, and must still
give the official outputs), keras-hub's own transformers converter (it reads
the folders we write; its backbone must give the official outputs too), and,
where PyTorch and transformers are installed, transformers itself (its
`save_pretrained` folders load into ours with its outputs; ours load in its
`from_pretrained` with ours).
"""

import json
import os
import struct

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff
from converter_oracle import CASES, load_outputs, official_inputs
from test_official_exactness import TOLERANCE, diffs_against

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
)
from checkpoints_convert import (
    MODELS,
    ConversionError,
    HFCheckpointReader,
    load_official_checkpoint,
    save_hf_checkpoint,
)
from checkpoints_convert.cli import main as convert_main
from checkpoints_convert.safetensors_file import SafetensorsFile

TINY = {
    "vocab_size": 100,
    "embedding_size": 16,
    "hidden_size": 32,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 24,
}


def _inputs(batch=3, length=12, seed=0, choices=None):
    rng = np.random.default_rng(seed)
    shape = (batch, choices, length) if choices else (batch, length)
    ids = rng.integers(5, 100, shape).astype("int32")
    mask = np.ones(shape, "int32")
    if choices:
        mask[1, :, 9:] = 0
    else:
        mask[1, 8:] = 0
    segments = np.zeros(shape, "int32")
    segments[..., 6:] = 1
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


def _randomized(model, seed=0):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    return model


@pytest.mark.parametrize("case", [c["name"] for c in CASES])
def test_official_outputs_survive_a_transformers_folder(official, case, tmp_path):
    outputs = load_outputs(official[case])
    model = load_official_checkpoint(official[case], model="pretrainer")
    save_hf_checkpoint(model, tmp_path)
    back = load_official_checkpoint(str(tmp_path), model="pretrainer")
    assert back.conversion_report.prefix_choice == "model.safetensors"
    for w, v in zip(model.weights, back.weights, strict=True):
        np.testing.assert_array_equal(w.numpy(), v.numpy(), err_msg=w.path)
    diffs = diffs_against(back, outputs)
    assert max(diffs.values()) < TOLERANCE, diffs
    if "classifier_logits" in outputs:
        classifier = load_official_checkpoint(official[case], model=AlbertClassifier)
        folder = tmp_path / "classifier"
        save_hf_checkpoint(classifier, folder)
        config = json.loads((folder / "config.json").read_text())
        assert config["architectures"] == ["AlbertForSequenceClassification"]
        assert len(config["id2label"]) == classifier.num_classes
        back = load_official_checkpoint(str(folder), model="classifier")
        logits = back(official_inputs(outputs))["logits"]
        assert max_abs_diff(logits, outputs["classifier_logits"]) < TOLERANCE


@pytest.mark.parametrize("case", ["all_shared", "groups_l4_g2", "inner_groups_2"])
def test_keras_hub_reads_our_folders_with_the_official_outputs(
    official, case, tmp_path
):
    keras_hub = pytest.importorskip("keras_hub")  # in the test extra
    outputs = load_outputs(official[case])
    model = load_official_checkpoint(official[case], model="pretrainer")
    save_hf_checkpoint(model, tmp_path)
    theirs = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path))
    x = official_inputs(outputs)
    got = theirs({k: x[k] for k in ("token_ids", "segment_ids", "padding_mask")})
    assert max_abs_diff(got["sequence_output"], outputs["sequence_output"]) < TOLERANCE
    assert max_abs_diff(got["pooled_output"], outputs["pooled_output"]) < TOLERANCE


@pytest.mark.parametrize(
    "make",
    [
        lambda b: b,
        lambda b: AlbertPretrainer(b),
        lambda b: AlbertClassifier(b, num_classes=3),
        lambda b: AlbertClassifier(b, num_classes=1),
        lambda b: AlbertSpanQA(b),
        lambda b: AlbertMultipleChoice(b, num_choices=2),
    ],
    ids=["backbone", "pretrainer", "classifier", "regression", "span_qa", "choice"],
)
def test_round_trip_is_bit_exact(make, tmp_path):
    model = _randomized(make(AlbertBackbone(dict(TINY, hidden_act="gelu_exact"))))
    save_hf_checkpoint(model, tmp_path)
    name = {cls: key for key, cls in MODELS.items()}[type(model)]
    kwargs = {"num_choices": 2} if name == "multiple_choice" else {}
    back = load_official_checkpoint(str(tmp_path), model=name, **kwargs)
    assert getattr(back, "backbone", back).config.hidden_act == "gelu_exact"
    for w, v in zip(model.weights, back.weights, strict=True):
        if name == "span_qa" and "pooler" in w.path:
            # transformers' QA class has no pooler: not written, reported.
            assert back.conversion_report.new_heads == ("pooler",)
            continue
        np.testing.assert_array_equal(w.numpy(), v.numpy(), err_msg=w.path)


def test_cli_both_ways(tmp_path):
    model = _randomized(AlbertPretrainer(AlbertBackbone(TINY)))
    model.save(tmp_path / "m.keras")
    assert (
        convert_main(
            [str(tmp_path / "m.keras"), "--to-hf", "--output", str(tmp_path / "hf")]
        )
        == 0
    )
    assert sorted(os.listdir(tmp_path / "hf")) == ["config.json", "model.safetensors"]
    out = tmp_path / "back.keras"
    assert convert_main([str(tmp_path / "hf"), "--output", str(out)]) == 0
    back = keras.saving.load_model(out)
    x = dict(_inputs(), mask_positions=np.tile(np.arange(4), (3, 1)).astype("int32"))
    assert max_abs_diff(back(x)["mlm_logits"], model(x)["mlm_logits"]) == 0


def test_cli_writes_a_text_models_sentencepiece_model(tmp_path):
    from albert_keras.models import AlbertTextModel
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tokenizers import AlbertTokenizer

    classifier = AlbertClassifier(AlbertBackbone(dict(TINY, vocab_size=8000)), 2)
    # Cased on purpose: the text model's tokenizer, not the pieces, says so.
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH, lowercase=False)
    text_model = AlbertTextModel(classifier, tokenizer, 16)
    text_model.save(tmp_path / "text.keras")
    out = tmp_path / "hf"
    assert (
        convert_main([str(tmp_path / "text.keras"), "--to-hf", "--output", str(out)])
        == 0
    )
    assert sorted(os.listdir(out)) == [
        "config.json",
        "model.safetensors",
        "spiece.model",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    with open(SPM_MODEL_PATH, "rb") as f:
        assert (out / "spiece.model").read_bytes() == f.read()
    with open(out / "tokenizer_config.json", encoding="utf-8") as f:
        assert json.load(f)["do_lower_case"] is False
    back = load_official_checkpoint(str(out), model="classifier")
    assert back.conversion_report.vocab_path == str(out / "spiece.model")


def test_what_transformers_cannot_hold_is_refused(tmp_path):
    with pytest.raises(ConversionError, match="SQuAD v2 head is not in transformers"):
        save_hf_checkpoint(AlbertSquadV2(AlbertBackbone(TINY)), tmp_path)
    layers = dict(TINY, num_hidden_layers=18, num_hidden_groups=14)
    with pytest.raises(ConversionError, match="float rounding"):
        save_hf_checkpoint(AlbertBackbone(layers), tmp_path)


def _folder(tmp_path, tensors, **config):
    values = dict(
        TINY,
        model_type="albert",
        num_hidden_groups=1,
        inner_group_num=1,
        hidden_act="gelu_new",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        type_vocab_size=2,
        initializer_range=0.02,
    )
    values.update(config)
    tmp_path.mkdir(parents=True)
    (tmp_path / "config.json").write_text(json.dumps(values))
    SafetensorsFile.write(tmp_path / "model.safetensors", tensors)
    return str(tmp_path)


def _pretrainer_tensors(tmp_path):
    save_hf_checkpoint(
        _randomized(AlbertPretrainer(AlbertBackbone(TINY))), tmp_path / "src"
    )
    st = SafetensorsFile(tmp_path / "src" / "model.safetensors")
    return {n: st.read(n) for n in st.names}


def test_bad_folders_say_what_is_wrong(tmp_path):
    tensors = _pretrainer_tensors(tmp_path)
    with pytest.raises(ConversionError, match="model_type='bert', not 'albert'"):
        HFCheckpointReader(_folder(tmp_path / "a", tensors, model_type="bert"))
    with pytest.raises(ConversionError, match="hidden_act='swish'"):
        HFCheckpointReader(_folder(tmp_path / "b", tensors, hidden_act="swish"))
    with pytest.raises(ConversionError, match="layer_norm_eps=1e-05"):
        HFCheckpointReader(_folder(tmp_path / "c", tensors, layer_norm_eps=1e-5))
    extra = dict(tensors, **{"albert.encoder.rotary.weight": np.zeros(3, "float32")})
    with pytest.raises(ConversionError, match="'albert.encoder.rotary.weight' is not"):
        HFCheckpointReader(_folder(tmp_path / "d", extra))
    untied = dict(tensors)
    untied["predictions.decoder.weight"] = np.ones((100, 16), "float32")
    with pytest.raises(ConversionError, match="untied MLM decoder"):
        HFCheckpointReader(_folder(tmp_path / "e", untied))
    tied = dict(tensors)
    tied["predictions.decoder.weight"] = tensors[
        "albert.embeddings.word_embeddings.weight"
    ]
    tied["predictions.decoder.bias"] = tensors["predictions.bias"]
    reader = HFCheckpointReader(_folder(tmp_path / "f", tied))
    assert "predictions.decoder.weight" in reader.ignored_keys
    # safetensors keeps one name of tied tensors: maybe only the decoder's.
    deduplicated = dict(tensors)
    deduplicated["predictions.decoder.bias"] = deduplicated.pop("predictions.bias")
    model = load_official_checkpoint(
        _folder(tmp_path / "f2", deduplicated), model="pretrainer"
    )
    np.testing.assert_array_equal(
        model.mlm_head.output_bias.numpy(), tensors["predictions.bias"]
    )
    with pytest.raises(ConversionError, match="layer 15 group 14 in the official"):
        HFCheckpointReader(
            _folder(tmp_path / "h", tensors, num_hidden_layers=22, num_hidden_groups=22)
        )
    wrong = dict(tensors)
    wrong["albert.pooler.weight"] = np.zeros((32, 30), "float32")
    with pytest.raises(ConversionError, match="bert/pooler/dense/kernel"):
        load_official_checkpoint(_folder(tmp_path / "g", wrong))
    path = tmp_path / "g" / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ConversionError, match="truncated"):
        HFCheckpointReader(str(tmp_path / "g"))


def test_safetensors_file_against_the_safetensors_package(tmp_path):
    numpy_io = pytest.importorskip("safetensors.numpy")  # in the test extra
    tensors = {
        "a": np.arange(6, dtype="float32").reshape(2, 3),
        "b": np.linspace(-1, 1, 5).astype("float16"),
        "c": np.array([[1.5]], "float64"),
    }
    SafetensorsFile.write(tmp_path / "ours.safetensors", tensors, {"format": "pt"})
    theirs = numpy_io.load_file(str(tmp_path / "ours.safetensors"))
    for k, v in tensors.items():
        np.testing.assert_array_equal(theirs[k], v)
    numpy_io.save_file(tensors, str(tmp_path / "theirs.safetensors"))
    f = SafetensorsFile(tmp_path / "theirs.safetensors")
    for k, v in tensors.items():
        np.testing.assert_array_equal(f.read(k), v)
    # bfloat16: the top half of float32, widened exactly.
    values = np.array([1.0, -2.5, 0.15625, 2.0**127], "float32")
    raw = (values.view(np.uint32) >> 16).astype("<u2").tobytes()
    header = json.dumps(
        {"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, len(raw)]}}
    ).encode()
    path = tmp_path / "bf16.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + raw)
    np.testing.assert_array_equal(SafetensorsFile(path).read("w"), values)


# --- transformers (PyTorch) itself, where installed ------------------------------

ARCHITECTURES = [
    ("AlbertForPreTraining", "pretrainer", {}),
    ("AlbertForSequenceClassification", "classifier", {"num_labels": 3}),
    ("AlbertForQuestionAnswering", "span_qa", {}),
    ("AlbertForMultipleChoice", "multiple_choice", {}),
    ("AlbertForTokenClassification", "token_classifier", {"num_labels": 5}),
    ("AlbertModel", "backbone", {}),
]


@pytest.mark.parametrize("architecture,model_name,extra", ARCHITECTURES)
@pytest.mark.parametrize("act", ["gelu_new", "gelu", "relu"])
def test_transformers_outputs(architecture, model_name, extra, act, tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    transformers = pytest.importorskip("transformers")
    hf_config = transformers.AlbertConfig(
        **dict(TINY, num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2),
        hidden_act=act,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
        **extra,
    )
    torch.manual_seed(1)
    theirs = getattr(transformers, architecture)(hf_config).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0.0, 0.3)
    theirs.save_pretrained(tmp_path / "hf")
    kwargs = {"num_choices": 2} if model_name == "multiple_choice" else {}
    ours = load_official_checkpoint(str(tmp_path / "hf"), model=model_name, **kwargs)
    choices = 2 if model_name == "multiple_choice" else None
    x = _inputs(choices=choices)
    feed = {
        "input_ids": torch.tensor(x["token_ids"].astype("int64")),
        "attention_mask": torch.tensor(x["padding_mask"].astype("int64")),
        "token_type_ids": torch.tensor(x["segment_ids"].astype("int64")),
    }

    def compare(torch_model):
        with torch.no_grad():
            out = torch_model(**feed)
        if model_name == "pretrainer":
            positions = np.tile(np.arange(12), (3, 1)).astype("int32")
            y = ours(dict(x, mask_positions=positions))
            pairs = [
                (y["mlm_logits"], out.prediction_logits),
                (y["sop_logits"], out.sop_logits),
            ]
        elif model_name == "span_qa":
            y = ours(x)
            pairs = [
                (y["start_logits"], out.start_logits),
                (y["end_logits"], out.end_logits),
            ]
        elif model_name == "backbone":
            y = ours(x)
            pairs = [
                (y["sequence_output"], out.last_hidden_state),
                (y["pooled_output"], out.pooler_output),
            ]
        else:
            pairs = [(ours(x)["logits"], out.logits)]
        return max(max_abs_diff(a, b.numpy()) for a, b in pairs)

    assert compare(theirs) < 1e-5
    save_hf_checkpoint(ours, tmp_path / "ours")
    again = (
        getattr(transformers, architecture).from_pretrained(tmp_path / "ours").eval()
    )
    assert compare(again) < 1e-5


def test_multi_label_classifiers_both_ways(tmp_path):
    """transformers' `problem_type="multi_label_classification"` is our
    `multi_label`: read and written, the logits equal, and its loss (PyTorch's
    BCEWithLogits) equals the multi-label task's Keras loss."""
    torch = pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    transformers = pytest.importorskip("transformers")
    from albert_keras.tasks import MultiLabelClassificationTask

    hf_config = transformers.AlbertConfig(
        **TINY,
        num_labels=4,
        problem_type="multi_label_classification",
        classifier_dropout_prob=0.0,
    )
    torch.manual_seed(3)
    theirs = transformers.AlbertForSequenceClassification(hf_config).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0.0, 0.3)
    theirs.save_pretrained(tmp_path / "hf")
    ours = load_official_checkpoint(str(tmp_path / "hf"), model="classifier")
    assert ours.multi_label and ours.num_classes == 4
    x = _inputs()
    labels = np.random.default_rng(0).integers(0, 2, (3, 4)).astype("float32")
    feed = {
        "input_ids": torch.tensor(x["token_ids"].astype("int64")),
        "attention_mask": torch.tensor(x["padding_mask"].astype("int64")),
        "token_type_ids": torch.tensor(x["segment_ids"].astype("int64")),
    }
    with torch.no_grad():
        out = theirs(**feed, labels=torch.tensor(labels))
    logits = ours(x)["logits"]
    assert max_abs_diff(logits, out.logits.numpy()) < 1e-5
    loss = MultiLabelClassificationTask().losses()[0]["logits"](labels, logits)
    assert abs(float(loss) - float(out.loss)) < 1e-6
    save_hf_checkpoint(ours, tmp_path / "ours", labels=["a", "b", "c", "d"])
    again = transformers.AlbertForSequenceClassification.from_pretrained(
        tmp_path / "ours"
    ).eval()
    assert again.config.problem_type == "multi_label_classification"
    with torch.no_grad():
        assert max_abs_diff(logits, again(**feed).logits.numpy()) < 1e-5
    single = AlbertClassifier(AlbertBackbone(TINY), num_classes=4)
    save_hf_checkpoint(single, tmp_path / "single")
    config = json.loads((tmp_path / "single" / "config.json").read_text())
    assert "problem_type" not in config
    back = load_official_checkpoint(str(tmp_path / "single"), "classifier")
    assert not back.multi_label
