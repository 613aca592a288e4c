"""Models that take raw strings: predict, .keras, and a SavedModel served elsewhere."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertSpanQA
from albert_keras.models import AlbertTextModel, with_tokenizer
from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer

TEXTS = [
    "A fine, witty film.",
    "Dull and far too long. " * 400,  # cut at packing, never an error
    "",
    "caf\u00e9 \x00 1,000,",
]
RAW = [t.encode() for t in TEXTS] + [b"caf\xe9 \xff bytes that are not UTF-8"]


@pytest.fixture(scope="module")
def text_model(spm_models):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    config = micro_config(vocab_size=3000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=3)
    return with_tokenizer(classifier, tokenizer, 32)


def test_strings_in_predictions_out(text_model):
    packed = text_model.packer(text_model.tokenizer(TEXTS))
    expected = text_model.task_model(packed)["logits"]
    got = text_model.predict(TEXTS, verbose=0)["logits"]
    assert got.shape == (4, 3) and max_abs_diff(got, expected) < 1e-6
    assert max_abs_diff(text_model(tf.constant(TEXTS))["logits"], expected) < 1e-6
    pairs = {"text_a": TEXTS, "text_b": TEXTS[::-1]}
    manual = text_model.task_model(
        text_model.packer(
            text_model.tokenizer(TEXTS), text_model.tokenizer(TEXTS[::-1])
        )
    )["logits"]
    assert max_abs_diff(text_model.predict(pairs, verbose=0)["logits"], manual) < 1e-6
    assert max_abs_diff(text_model((TEXTS, TEXTS[::-1]))["logits"], manual) < 1e-6
    assert text_model(tf.constant(RAW))["logits"].shape == (5, 3)


def test_keras_file_carries_the_vocabulary(text_model, tmp_path):
    path = tmp_path / "text.keras"
    text_model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, AlbertTextModel)
    assert "proto" not in str(restored.get_config())
    got = restored(tf.constant(TEXTS))["logits"]
    assert max_abs_diff(got, text_model(tf.constant(TEXTS))["logits"]) < 1e-6


def test_keras_files_load_after_import_keras_then_albert_keras(text_model, tmp_path):
    # A fresh process that imports Keras, then only the package: its `.keras`
    # files (a text-in model, a compiled pretrainer) load with Keras's own
    # `load_model`, outputs and optimizer as saved.
    from albert_keras import AlbertPretrainer
    from albert_keras.training import create_optimizer

    text_model.save(tmp_path / "text.keras")
    np.save(tmp_path / "logits.npy", text_model(tf.constant(RAW))["logits"].numpy())
    np.save(tmp_path / "texts.npy", np.array(RAW, dtype=object), allow_pickle=True)
    pretrainer = AlbertPretrainer(AlbertBackbone(micro_config(vocab_size=50)))
    pretrainer.compile(optimizer=create_optimizer("lamb", 1e-3, 10, 2))
    pretrainer.save(tmp_path / "pretrainer.keras")
    script = textwrap.dedent(
        """
        import sys
        import keras, numpy as np, tensorflow as tf
        import albert_keras
        text = keras.saving.load_model("text.keras")
        texts = tf.constant(np.load("texts.npy", allow_pickle=True))
        logits = text(texts)["logits"].numpy()
        assert np.max(np.abs(logits - np.load("logits.npy"))) < 1e-6
        pretrainer = keras.saving.load_model("pretrainer.keras")
        assert type(pretrainer).__name__ == "AlbertPretrainer"
        assert type(pretrainer.optimizer).__name__ == "FastLamb"
        print("LOADED")
        """
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    assert result.returncode == 0 and "LOADED" in result.stdout, result.stderr[-2000:]


def test_saved_model_serves_raw_strings_without_albert_keras(text_model, tmp_path):
    path = str(tmp_path / "serving")
    text_model.export(path, verbose=False)
    expected = text_model(tf.constant(RAW))["logits"].numpy()
    expected_pairs = text_model((tf.constant(RAW), tf.constant(RAW[::-1])))[
        "logits"
    ].numpy()
    script = textwrap.dedent(
        """
        import sys
        import numpy as np, tensorflow as tf
        import tensorflow_text  # registers the tokenizer ops
        loaded = tf.saved_model.load(sys.argv[1])
        texts = tf.constant(np.load(sys.argv[3], allow_pickle=True))
        out = loaded.serve(texts)["logits"].numpy()
        pairs = loaded.serve_pairs(texts, texts[::-1])["logits"].numpy()
        signature = loaded.signatures["serve"](texts)
        assert "albert_keras" not in sys.modules
        np.savez(sys.argv[2], out=out, pairs=pairs, sig=signature["logits"].numpy())
        """
    )
    texts = tmp_path / "texts.npy"
    np.save(texts, np.array(RAW, dtype=object), allow_pickle=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run(
        [sys.executable, "-c", script, path, str(tmp_path / "o.npz"), str(texts)],
        check=True,
        env=env,
        cwd=str(tmp_path),
    )
    served = np.load(tmp_path / "o.npz")
    assert max_abs_diff(served["out"], expected) < 1e-5
    assert max_abs_diff(served["sig"], expected) < 1e-5
    assert max_abs_diff(served["pairs"], expected_pairs) < 1e-5


def test_wordpiece_text_model_and_span_qa(wordpiece_vocab, tmp_path):
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab)
    config = micro_config(vocab_size=8000, max_position_embeddings=24)
    model = AlbertTextModel(
        AlbertSpanQA(AlbertBackbone(config)), tokenizer, 24, dynamic_length=True
    )
    packed = model.pack({"text_a": ["谁?"], "text_b": ["天下大势，分久必合。"]})
    assert packed["token_ids"].numpy()[0, 0] == 101  # [CLS] of this layout
    assert packed["token_ids"].shape == (1, 15)  # [CLS] 2 [SEP] 10 [SEP]
    out = model({"text_a": ["谁?"], "text_b": ["天下大势，分久必合。"]})
    assert out["start_logits"].shape == (1, 15)
    model.export(str(tmp_path / "zh"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "zh"))
    served = loaded.serve_pairs(
        tf.constant(["谁?"]), tf.constant(["天下大势，分久必合。"])
    )
    assert max_abs_diff(served["start_logits"], out["start_logits"]) < 1e-5


def test_checks_what_the_model_can_take(spm_models):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    small = AlbertClassifier(AlbertBackbone(micro_config(vocab_size=100)), 2)
    with pytest.raises(ValueError, match="tokenizer has 3000 tokens"):
        AlbertTextModel(small, tokenizer, 8)
    short = AlbertClassifier(
        AlbertBackbone(micro_config(vocab_size=3000, max_position_embeddings=16)), 2
    )
    with pytest.raises(ValueError, match="max_position_embeddings=16"):
        AlbertTextModel(short, tokenizer, 32)
    with pytest.raises(ValueError, match="only as a TensorFlow SavedModel"):
        AlbertTextModel(short, tokenizer, 16).export("x", format="onnx")


CONTEXTS = ["Tom lent Ann his umbrella. Why?", "", "caf\u00e9 " * 300]
OPTIONS = [
    ["It was raining.", "He was hungry.", "x"],
    ["", "a", "b"],
    ["long " * 300, "short", "caf\u00e9 \x00"],
]


@pytest.fixture(scope="module")
def choice_model(spm_models):
    from albert_keras import AlbertMultipleChoice

    tokenizer = AlbertTokenizer(spm_models["uncased"])
    config = micro_config(vocab_size=3000, max_position_embeddings=32)
    chooser = AlbertMultipleChoice(AlbertBackbone(config), num_choices=3)
    return with_tokenizer(chooser, tokenizer, 32)


@pytest.fixture(scope="module")
def choice_savedmodel(choice_model, tmp_path_factory):
    """One export of `choice_model`, loaded by the tests that serve it (an
    export traces the tokenizer and the model: seconds each)."""
    path = str(tmp_path_factory.mktemp("choice") / "serving")
    choice_model.export(path, verbose=False)
    return path


def _choice_reference(model):
    """Scores from choice_dataset's packing (the training data's) of the texts."""
    from albert_keras.tasks.task_datasets import choice_dataset

    examples = [
        {"context": c, "options": o, "label": 0}
        for c, o in zip(CONTEXTS, OPTIONS, strict=True)
    ]
    features, _ = next(iter(choice_dataset(examples, model.tokenizer, 32, 8)))
    return model.task_model(features)["logits"].numpy()


def test_choice_text_model_scores_raw_options(
    choice_model, choice_savedmodel, tmp_path
):
    from albert_keras.models import AlbertChoiceTextModel

    assert isinstance(choice_model, AlbertChoiceTextModel)
    expected = _choice_reference(choice_model)
    inputs = {"context": CONTEXTS, "options": OPTIONS}
    got = choice_model.predict(inputs, verbose=0)["logits"]
    assert got.shape == (3, 3) and max_abs_diff(got, expected) < 1e-6
    assert max_abs_diff(choice_model((CONTEXTS, OPTIONS))["logits"], expected) < 1e-6
    # Each option is scored on its own: permuting options permutes the scores.
    flipped = choice_model((CONTEXTS, [o[::-1] for o in OPTIONS]))["logits"]
    assert max_abs_diff(flipped, expected[:, ::-1]) < 1e-6
    path = tmp_path / "choice.keras"
    choice_model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, AlbertChoiceTextModel)
    assert max_abs_diff(restored(inputs)["logits"], expected) < 1e-6
    loaded = tf.saved_model.load(choice_savedmodel)
    served = loaded.serve(tf.constant(CONTEXTS), tf.constant(OPTIONS))["logits"]
    assert max_abs_diff(served, expected) < 1e-5


def test_choice_text_model_errors(choice_model):
    from albert_keras.models import AlbertChoiceTextModel

    with pytest.raises(ValueError, match="scores 3 options per context"):
        choice_model((CONTEXTS, [o[:2] for o in OPTIONS]))
    with pytest.raises(ValueError, match="Missing: \\['options'\\]"):
        choice_model({"context": CONTEXTS})
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch of contexts"):
        choice_model((CONTEXTS[:2], OPTIONS))
    with pytest.raises(ValueError, match="feeds an AlbertMultipleChoice"):
        AlbertChoiceTextModel(choice_model.task_model.backbone, choice_model.tokenizer)


def test_choice_text_model_names_the_option_counts(choice_model, choice_savedmodel):
    """A request with another number of options than the model scores fails
    with both counts named: before, the SavedModel's `serve` failed to bind
    (`Can not cast TensorSpec(shape=(2, 2)...) to ...(None, 3)`), its
    signature printed shapes, and rows of different lengths failed as a
    "non-rectangular Python sequence"."""
    expected = "The model scores 3 options per context (num_choices=3). Received "
    two, four = [o[:2] for o in OPTIONS], [[*o, "y"] for o in OPTIONS]
    with pytest.raises(ValueError) as error:
        choice_model((CONTEXTS, two))
    assert expected + "2 options per context (options of shape [3, 2])." in str(
        error.value
    )
    # A traced predict (shapes relaxed once it ran) fails in the graph.
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)) as error:
        choice_model.predict({"context": CONTEXTS, "options": four}, verbose=0)
    assert expected + "4 options per context" in str(error.value)
    with pytest.raises(ValueError) as error:
        choice_model((CONTEXTS, [OPTIONS[0], OPTIONS[1][:2], OPTIONS[2]]))
    assert str(error.value) == expected + "2 options for context 1."
    loaded = tf.saved_model.load(choice_savedmodel)
    for options in (two, four):
        count = len(options[0])
        message = f"{expected}{count} options per context."
        with pytest.raises(tf.errors.InvalidArgumentError) as error:
            loaded.serve(tf.constant(CONTEXTS), tf.constant(options))
        assert message in str(error.value)
        with pytest.raises(tf.errors.InvalidArgumentError) as error:
            loaded.signatures["serve"](
                context=tf.constant(CONTEXTS), options=tf.constant(options)
            )
        assert message in str(error.value)
    served = loaded.serve(tf.constant(CONTEXTS), tf.constant(OPTIONS))["logits"]
    assert max_abs_diff(served, choice_model((CONTEXTS, OPTIONS))["logits"]) < 1e-5


PAIR_LABELS = ["False", "Neither", "True"]


def _task_export(text_model, task_name, path, labels=None):
    """`Task.export` of `text_model`'s weights as `task_name`: what a run
    writes to its savedmodel/ (`model.export` plus assets.extra)."""
    from albert_keras.tasks import task_from_name

    task = task_from_name(task_name, sequence_length=32, labels=labels)
    task.model, task.tokenizer = text_model.task_model, text_model.tokenizer
    task.export(str(path))
    return str(path)


@pytest.fixture(scope="module")
def pair_savedmodel(text_model, tmp_path_factory):
    """The SavedModel of a `pair` run: its `serving_default` and its labels
    are checked by two tests (one export, seconds of tracing, for both)."""
    folder = tmp_path_factory.mktemp("pair") / "savedmodel"
    return _task_export(text_model, "pair", folder, PAIR_LABELS)


@pytest.mark.parametrize("pairs", [False, True])
def test_serving_default_of_a_pair_model_takes_pairs(
    text_model, tmp_path, request, pairs
):
    """TF Serving calls `serving_default` when no signature is named: for a
    model trained on pairs it takes (text_a, text_b), not single texts."""
    from albert_keras.tasks import task_from_name

    task_name = "pair" if pairs else "classify"
    task = task_from_name(task_name, sequence_length=32)
    model = task.text_model(text_model.task_model, text_model.tokenizer)
    assert model.pairs == pairs
    model.save(tmp_path / "m.keras")
    assert keras.saving.load_model(tmp_path / "m.keras").pairs == pairs
    if pairs:  # the pair run's SavedModel: `model.export` of the same model
        path = request.getfixturevalue("pair_savedmodel")
    else:
        path = str(tmp_path / "serving")
        model.export(path, verbose=False)
    default = tf.saved_model.load(path).signatures["serving_default"]
    a, b = tf.constant(TEXTS), tf.constant(TEXTS[::-1])
    if pairs:
        assert sorted(default.structured_input_signature[1]) == ["text_a", "text_b"]
        got, expected = default(text_a=a, text_b=b), model((a, b))
    else:
        assert sorted(default.structured_input_signature[1]) == ["texts"]
        got, expected = default(texts=a), model(a)
    assert max_abs_diff(got["logits"], expected["logits"]) < 1e-5


def test_regress_pairs_found_in_the_file_serve_pairs_by_default(text_model):
    """`regress` leaves `pairs` None and finds a pair's two fields in its file."""
    from albert_keras.tasks import task_from_name

    fields = ("premise", "hypothesis")
    task = task_from_name("regress", sequence_length=32, text_fields=fields)
    assert task.config.pairs is None
    assert task.text_model(text_model.task_model, text_model.tokenizer).pairs


@pytest.mark.parametrize("task_name", ["pair", "regress"])
def test_saved_model_of_a_run_names_its_labels(
    text_model, tmp_path, request, task_name
):
    """The SavedModel serves logits only: `assets.extra/labels.json` says the
    label of each (what `albert-keras predict` writes); none for regression."""
    import json

    if task_name == "regress":
        folder = _task_export(text_model, "regress", tmp_path / "savedmodel")
        assert not os.path.exists(os.path.join(folder, "assets.extra", "labels.json"))
        return
    folder = request.getfixturevalue("pair_savedmodel")
    path = os.path.join(folder, "assets.extra", "labels.json")
    with open(path) as f:
        assert json.load(f) == PAIR_LABELS
    served = tf.saved_model.load(folder)
    logits = served.serve_pairs(tf.constant(TEXTS), tf.constant(TEXTS[::-1]))
    assert logits["logits"].shape == (len(TEXTS), len(PAIR_LABELS))
