"""`predict` of the text-in models on the bad input their calls take (serving.md,
run-safety.md: "Bad input never fails, in Python or in the SavedModel").

An empty batch predicts nothing instead of Keras' UnboundLocalError, and two
batches that do not pair up are refused by name instead of Keras'
AttributeError.
"""

import numpy as np
import pytest
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.models import AlbertMultipleChoice, AlbertSquadV2, with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer


@pytest.fixture(scope="module")
def models():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    config = micro_config(vocab_size=8000, max_position_embeddings=64)
    return {
        "pairs": with_tokenizer(
            AlbertClassifier(AlbertBackbone(config), 3), tokenizer, 16
        ),
        "choice": with_tokenizer(
            AlbertMultipleChoice(AlbertBackbone(config), 3), tokenizer, 16
        ),
        "qa": with_tokenizer(
            AlbertSquadV2(AlbertBackbone(config)), tokenizer, 32, max_query_length=8
        ),
    }


EMPTY = {
    "pairs": {"text_a": [], "text_b": []},
    "choice": {"context": [], "options": np.zeros([0, 3], object)},
    "qa": {"question": [], "context": []},
}
UNPAIRED = {
    "pairs": {"text_a": ["It rains.", "Dull."], "text_b": ["It is wet."]},
    "choice": {"context": ["Where?", "Who?"], "options": [["a", "b", "c"]]},
    "qa": {"question": ["Who came?", "When?"], "context": ["Mr. Darcy came."]},
}


@pytest.mark.parametrize("kind", sorted(EMPTY))
def test_predict_on_an_empty_batch_gives_empty_outputs(models, kind):
    model = models[kind]
    outputs = model.predict(EMPTY[kind], verbose=0)
    expected = model(EMPTY[kind])  # the call handled it already
    assert set(outputs) == set(expected)
    for name, value in outputs.items():
        assert isinstance(value, np.ndarray) and value.shape[0] == 0, name
        assert value.shape[1:] == tuple(expected[name].shape[1:]), name


def test_predict_on_no_single_text(models):
    assert models["pairs"].predict([], verbose=0)["logits"].shape == (0, 3)


@pytest.mark.parametrize("kind", sorted(UNPAIRED))
def test_predict_refuses_batches_that_do_not_pair_up(models, kind):
    first, second = UNPAIRED[kind]
    message = f"row by row. Received: {first}: 2, {second}: 1"
    with pytest.raises(ValueError, match=message):
        models[kind].predict(UNPAIRED[kind], verbose=0)


def test_predict_of_a_full_batch_is_unchanged(models):
    model = models["pairs"]
    pairs = {"text_a": ["It rains.", "Dull."], "text_b": ["It is wet.", ""]}
    predicted = model.predict(pairs, verbose=0)["logits"]
    np.testing.assert_allclose(predicted, model(pairs)["logits"], atol=1e-6)


ONE = {
    "pairs": {"text_a": "It rains.", "text_b": "It is wet."},
    "qa": {"question": "Who came?", "context": "Mr. Darcy came."},
}


@pytest.mark.parametrize("kind", sorted(ONE))
def test_predict_takes_one_text_as_a_batch_of_one(models, kind):
    # It used to fail in Keras with "IndexError: tuple index out of range".
    model = models[kind]
    batch = {key: [text] for key, text in ONE[kind].items()}
    predicted = model.predict(ONE[kind], verbose=0)
    for name, value in model.predict(batch, verbose=0).items():
        assert predicted[name].shape == value.shape and value.shape[0] == 1, name
        np.testing.assert_array_equal(predicted[name], value)
    single = models["pairs"].predict("Dull.", verbose=0)["logits"]
    np.testing.assert_array_equal(
        single, models["pairs"].predict(["Dull."], verbose=0)["logits"]
    )


@pytest.mark.parametrize("inputs", [{"text_a": ["It rains."]}, {"text": ["Dull."]}])
def test_a_pair_dict_without_its_keys_is_refused_by_name(models, inputs):
    # It used to be a bare KeyError: 'text_b'.
    message = r"takes \{'text_a': ..., 'text_b': ...\}. Missing"
    with pytest.raises(ValueError, match=message):
        models["pairs"](inputs)


def test_with_tokenizer_takes_a_vocabulary_path():
    # A path used to fail with "'str' object has no attribute 'vocabulary_size'".
    config = micro_config(vocab_size=8000, max_position_embeddings=64)
    classifier = AlbertClassifier(AlbertBackbone(config), 3)
    by_path = with_tokenizer(classifier, SPM_MODEL_PATH, 16)
    by_object = with_tokenizer(classifier, AlbertTokenizer(SPM_MODEL_PATH), 16)
    texts = ["It rains.", "Dull."]
    np.testing.assert_array_equal(
        by_path.predict(texts, verbose=0)["logits"],
        by_object.predict(texts, verbose=0)["logits"],
    )
    with pytest.raises(TypeError, match="must be an AlbertTokenizer"):
        with_tokenizer(classifier, 8000, 16)
    # "16" used to fail comparing a str with an int: the packer names it.
    with pytest.raises(ValueError, match="`sequence_length` must be an integer"):
        with_tokenizer(classifier, SPM_MODEL_PATH, "16")
    # A pretrainer built, then failed on the first call (no mask_positions);
    # it is a fill-mask model now.
    from albert_keras import AlbertPretrainer
    from albert_keras.models.albert_fill_mask_text_model import (
        AlbertFillMaskTextModel,
    )

    pretrainer = AlbertPretrainer(classifier.backbone)
    model = with_tokenizer(pretrainer, SPM_MODEL_PATH, 16, top_k=2)
    assert isinstance(model, AlbertFillMaskTextModel)
    assert model.predict(["It [MASK]."], verbose=0)["token_ids"].shape == (1, 20, 2)
    with pytest.raises(ValueError, match="needs an AlbertPretrainer"):
        AlbertFillMaskTextModel(classifier, AlbertTokenizer(SPM_MODEL_PATH), 16)
    with pytest.raises(ValueError, match="`top_k` must be a positive integer"):
        with_tokenizer(pretrainer, SPM_MODEL_PATH, 16, top_k=0)


def test_numpy_string_arrays_are_texts(models):
    """`np.array(["..."])` (dtype <U) failed in Keras ("Invalid dtype: str96")."""
    model = models["pairs"]
    texts = ["A fine film.", "", "caf\u00e9 \U0001f600"]
    expected = model.predict(texts, verbose=0)["logits"]
    for given in (np.array(texts), np.array(texts, dtype=object)):
        got = model.predict(given, verbose=0)["logits"]
        np.testing.assert_allclose(got, expected, atol=1e-6)
    pairs = {"text_a": np.array(texts), "text_b": np.array(texts[::-1])}
    expected = model.predict({"text_a": texts, "text_b": texts[::-1]}, verbose=0)
    got = model.predict(pairs, verbose=0)
    np.testing.assert_allclose(got["logits"], expected["logits"], atol=1e-6)


@pytest.mark.parametrize(
    "kind, inputs, item",
    [
        ("pairs", ["fine", None], "item [1] is NoneType None"),
        ("pairs", [3, "fine"], "item [0] is int 3"),
        ("pairs", np.array(["fine", 2.5], dtype=object), "item [1] is float 2.5"),
        (
            "choice",
            {"context": ["c"], "options": [["a", 1, "b"]]},
            "item [0][1] is int",
        ),
        ("qa", {"question": ["q"], "context": [None]}, "item [0] is NoneType"),
    ],
)
def test_a_text_that_is_not_a_string_is_named(models, kind, inputs, item):
    """Numbers and None among the texts: the item is named, not Keras'/TF's
    "Can't convert Python sequence with mixed types"."""
    with pytest.raises(ValueError, match=r"takes strings \(str or bytes\)") as error:
        models[kind].predict(inputs, verbose=0)
    assert item in str(error.value)
