"""A served batch goes through the model `serving_rows` rows at a time.

Before, a SavedModel signature ran its whole request at once: 30,000 short
texts took a tiny classifier's SavedModel to 6.8 GB, 40 long contexts a tiny
QA model's to 3.7 GB. Now memory is that of one slice, whatever the batch,
and the outputs are those of one call.
"""

import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config, python_json

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig, AlbertSpanQA
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer

TEXTS = ["A fine, witty film.", "", "caf\u00e9 \U0001f600", "dull " * 50, "Ok."]


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL_PATH)


def test_slices_give_the_outputs_of_one_call(tokenizer, tmp_path):
    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=3)
    model = with_tokenizer(classifier, tokenizer, 32)
    model.serving_rows = 2  # 5 texts: slices of 2, 2 and 1
    model.export(str(tmp_path / "serving"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "serving"))
    a, b = tf.constant(TEXTS), tf.constant(TEXTS[::-1])
    got = served.serve(a)["logits"]
    assert max_abs_diff(got, model(a)["logits"]) < 1e-5
    got = served.serve_pairs(a, b)["logits"]
    assert max_abs_diff(got, model((a, b))["logits"]) < 1e-5
    assert served.serve(tf.constant([], tf.string))["logits"].shape == (0, 3)
    # The first slice of each is paired; the batches are not.
    with pytest.raises(tf.errors.InvalidArgumentError, match="paired row by row"):
        served.serve_pairs(a[:2], tf.concat([a, a], 0)[:4])


def test_qa_slices_give_the_answers_of_one_call(tokenizer, tmp_path):
    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    keras.utils.set_random_seed(3)
    reader = AlbertSpanQA(AlbertBackbone(config))
    model = with_tokenizer(reader, tokenizer, 32, doc_stride=8, max_query_length=8)
    model.max_windows = 256  # serving_rows: 512 // 256 = 2 questions a slice
    assert model.serving_rows == 2
    model.serving_rows = 3
    assert model.serving_rows == 3
    model.serving_rows = 2
    model.export(str(tmp_path / "serving"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "serving"))
    questions = tf.constant(["Who?", "What film?", "", "Why so dull?", "Ok?"])
    contexts = tf.constant(TEXTS)
    got = served.serve(questions, contexts)
    expected = model((questions, contexts))
    assert sorted(got) == sorted(expected)
    for key in got:
        served_values, called = got[key].numpy(), np.asarray(expected[key])
        if served_values.dtype.kind != "f":
            assert np.array_equal(served_values, called), key
            continue
        # The SavedModel's graph may round a float differently (1 ulp was
        # seen with Keras 3.13); answers and positions stay exact.
        assert np.array_equal(np.isinf(served_values), np.isinf(called)), key
        finite = np.isfinite(called)
        assert max_abs_diff(served_values[finite], called[finite]) < 1e-6, key


def test_the_model_is_traced_once_per_signature():
    """The first slice and the loop's slices share one traced graph: tracing
    the model twice per signature made every export ~2-3 s slower."""
    from albert_keras.models.chunked_serving import in_chunks

    traces = []

    def double(x):
        traces.append(x.shape)
        return {"y": x * 2}

    spec = tf.TensorSpec([None], tf.int32)
    serve = tf.function(lambda x: in_chunks(double, [x], 2), input_signature=[spec])
    assert serve(tf.range(5))["y"].numpy().tolist() == [0, 2, 4, 6, 8]
    assert serve(tf.range(0))["y"].numpy().tolist() == []
    assert len(traces) == 1, traces


# Serves 12,000 short texts with TensorFlow alone; prints the peak RSS.
SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401 (the tokenizer's ops)

def peak_mb():
    with open("/proc/self/status") as f:
        return int(next(x for x in f if x.startswith("VmHWM:")).split()[1]) / 1024

loaded = tf.saved_model.load(sys.argv[1])
first = loaded.serve(tf.constant(["A fine film."]))["logits"].numpy()
before = peak_mb()
out = loaded.serve(tf.constant(["A fine film."] * 12000))["logits"].numpy()
print(json.dumps({
    "before_mb": before,
    "peak_mb": peak_mb(),
    "same": bool(abs(out - first).max() < 1e-5),
    "rows": len(out),
}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc VmHWM")
def test_a_batch_of_12000_texts_is_served_in_bounded_memory(tokenizer, tmp_path):
    # A fresh process serves, so that the peak RSS is the served model's; the
    # export runs here (a second process would pay TensorFlow's import again).
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    assert config.hidden_size == 64
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    model = with_tokenizer(classifier, tokenizer, 64)
    model.export(str(tmp_path / "s"), verbose=False)
    served = python_json(SERVE, str(tmp_path / "s"))
    print(f"12,000 texts: peak {served['peak_mb']:.0f} MB ({served['before_mb']:.0f})")
    assert served["rows"] == 12000 and served["same"]
    # All at once (before): ~2.7 GB more than the loaded model.
    assert served["peak_mb"] - served["before_mb"] < 400


def test_a_dynamic_length_model_serves_rows_of_any_length(tokenizer, tmp_path):
    """Slices would each pad to their own longest row (and not concatenate):
    a `dynamic_length` model serves its batch whole, padded to the longest."""
    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    model = with_tokenizer(AlbertBackbone(config), tokenizer, 32, dynamic_length=True)
    model.serving_rows = 2
    model.export(str(tmp_path / "serving"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "serving"))
    texts = tf.constant(["a", "b", "a much longer text with many words", "c"])
    got, expected = served.serve(texts), model(texts)
    assert got["sequence_output"].shape[:2] == expected["sequence_output"].shape[:2]
    for key in ("sequence_output", "pooled_output"):
        assert max_abs_diff(got[key], expected[key]) < 1e-5, key


def test_slices_of_a_dynamic_length_pad_to_their_own_longest_row():
    """Outputs of a fixed width stack: each slice pads to its longest row.
    Outputs whose width is the slice's do not: the batch goes at once."""
    from albert_keras.models.chunked_serving import in_chunks

    lengths = tf.constant([1, 2, 9, 3, 4])

    def widths(n):  # each row says how wide its call padded
        return {"width": tf.fill(tf.shape(n), tf.reduce_max(n))}

    assert in_chunks(widths, [lengths], 2)["width"].numpy().tolist() == [2, 2, 9, 9, 4]

    def grid(n):
        return {"mask": tf.sequence_mask(n), **widths(n)}

    whole = in_chunks(grid, [lengths], 2)
    assert whole["width"].numpy().tolist() == [9] * 5
    assert whole["mask"].shape == (5, 9)


def _assert_same_outputs(got, expected, name):
    assert sorted(got) == sorted(expected), name
    for key, value in got.items():
        value, reference = np.asarray(value), np.asarray(expected[key])
        if value.dtype.kind in "fc":
            assert max_abs_diff(value, reference) < 1e-5, (name, key)
        else:
            assert np.array_equal(value, reference), (name, key)


def test_dynamic_length_task_models_serve_the_full_length_outputs(tokenizer, tmp_path):
    """The tasks serve `dynamic_length` text models (classifier, tagger,
    multiple choice): in slices of 2, each padded to its own longest row,
    they give the outputs of the same model padded to the full length."""
    from albert_keras import AlbertMultipleChoice, AlbertTokenClassifier

    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    keras.utils.set_random_seed(5)
    texts = tf.constant(["Ok.", "a", "dull " * 50, "A fine, witty film.", ""])
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=3)
    full = with_tokenizer(classifier, tokenizer, 32)
    cut = with_tokenizer(classifier, tokenizer, 32, dynamic_length=True)
    cut.serving_rows = 2
    cut.export(str(tmp_path / "serving"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "serving"))
    _assert_same_outputs(served.serve(texts), full(texts), "serve")
    pairs = (texts, texts[::-1])
    _assert_same_outputs(served.serve_pairs(*pairs), full(pairs), "serve_pairs")
    # The others through their signature's function, unexported (an export
    # is seconds each; the classifier's above is the same code).
    options = tf.constant([["Yes.", "No, not at all."]] * 5)
    for task_model, inputs in (
        (AlbertTokenClassifier(AlbertBackbone(config), num_classes=4), (texts,)),
        (AlbertMultipleChoice(AlbertBackbone(config), num_choices=2), (texts, options)),
    ):
        full = with_tokenizer(task_model, tokenizer, 32)
        cut = with_tokenizer(task_model, tokenizer, 32, dynamic_length=True)
        cut.serving_rows = 2
        serve = tf.function(
            lambda *x, cut=cut: cut._in_rows(
                lambda *y: cut(y if len(y) > 1 else y[0]), *x
            )
        )
        got = serve(*inputs)
        _assert_same_outputs(
            got, full(inputs if len(inputs) > 1 else inputs[0]), cut.name
        )


SERVING_ROWS_ERROR = (
    "`serving_rows` must be a positive integer: the rows of a served batch "
    "that go through the model at once (e.g. `model.serving_rows = 8`; None "
    "for the default). Received: serving_rows={!r}"
)


def test_serving_rows_travel_in_the_keras_file(tokenizer, tmp_path):
    """A set `serving_rows` is saved and loaded (before, it went back to the
    default); the default is not written, so older configs load as before."""
    config = micro_config(vocab_size=8000, max_position_embeddings=32)
    classifier = with_tokenizer(
        AlbertClassifier(AlbertBackbone(config), num_classes=2), tokenizer, 32
    )
    reader = with_tokenizer(
        AlbertSpanQA(AlbertBackbone(config)), tokenizer, 32, max_query_length=8
    )
    for model, default in ((classifier, 64), (reader, 8)):
        assert "serving_rows" not in model.get_config()
        model.serving_rows = 5
        model.save(tmp_path / "m.keras")
        assert keras.saving.load_model(tmp_path / "m.keras").serving_rows == 5
        model.serving_rows = None
        assert model.serving_rows == default
        model.save(tmp_path / "m.keras")
        assert keras.saving.load_model(tmp_path / "m.keras").serving_rows == default
    for bad in (0, -1, 2.5, "8", True):
        with pytest.raises(ValueError) as error:
            classifier.serving_rows = bad
        assert str(error.value) == SERVING_ROWS_ERROR.format(bad)
    assert classifier.serving_rows == 64
