"""`AlbertFillMaskTextModel` against transformers' fill-mask pipeline, and served."""

import numpy as np
import pytest
import tensorflow as tf

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer

# Masks between spaces: where transformers' tokenizer and the official one agree.
TEXTS = [
    "Emma Woodhouse , handsome , [MASK] , and rich .",
    "[MASK] was the youngest of the two [MASK] of a most affectionate father .",
    "She had lived nearly [MASK] years in the world",
]


@pytest.fixture(scope="module")
def pretrainer():
    """A tiny pretrainer with large random weights: peaked, distinct scores."""
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertPretrainer(AlbertBackbone(config))
    rng = np.random.default_rng(0)
    for w in model.weights:
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    return model


def test_candidates_are_transformers_fill_mask_pipelines(pretrainer, tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    transformers = pytest.importorskip("transformers")
    from checkpoints_convert.hf_writer import save_hf_checkpoint

    save_hf_checkpoint(pretrainer, tmp_path, vocab=SPM_MODEL_PATH)
    pipeline = transformers.pipeline("fill-mask", model=str(tmp_path), top_k=5)
    model = with_tokenizer(pretrainer, SPM_MODEL_PATH, 32, top_k=5)
    ours = model.fill_mask(TEXTS)
    for text, masks in zip(TEXTS, ours, strict=True):
        theirs = pipeline(text)
        theirs = [theirs] if isinstance(theirs[0], dict) else theirs  # one mask
        assert len(masks) == len(theirs) == text.count("[MASK]")
        for got, expected in zip(masks, theirs, strict=True):
            assert [c["token_id"] for c in got] == [c["token"] for c in expected]
            diff = np.abs(
                np.array([c["score"] for c in got]) - [c["score"] for c in expected]
            ).max()
            assert diff < 1e-6, diff
    # Peaked: ten times the uniform 1 / 8000, so an order swap would show.
    assert max(c["score"] for c in ours[0][0]) > 10 / 8000


def test_scores_are_the_softmax_of_the_mlm_logits(pretrainer):
    """The top-k of a NumPy softmax over the pretrainer's logits at the mask."""
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    model = with_tokenizer(pretrainer, tokenizer, 24, top_k=4, max_masks=3)
    text = "It was [MASK] of her to be so [MASK]."
    out = model.predict([text], verbose=0)
    ids = [2, *tokenizer("It was").numpy(), 4, *tokenizer("of her to be so").numpy()]
    ids = [*ids, 4, *tokenizer.tokenize_continuations(["."])[0].numpy(), 3]
    where = [i for i, t in enumerate(ids) if t == 4]
    inputs = {
        "token_ids": np.array([ids + [0] * (24 - len(ids))], "int32"),
        "segment_ids": np.zeros((1, 24), "int32"),
        "padding_mask": np.array([[1] * len(ids) + [0] * (24 - len(ids))], "int32"),
        "mask_positions": np.array([where], "int32"),
    }
    logits = pretrainer.predict(inputs, verbose=0)["mlm_logits"][0].astype("float64")
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    top = np.argsort(-probs, axis=-1)[:, :4]
    np.testing.assert_array_equal(out["token_ids"][0, :2], top)
    np.testing.assert_allclose(
        out["scores"][0, :2], np.take_along_axis(probs, top, -1), atol=1e-6
    )
    assert out["token_ids"][0, 2].tolist() == [-1] * 4 and out["masks"].tolist() == [2]
    assert out["tokens"][0, 0, 0].decode() == tokenizer.id_to_token(int(top[0, 0]))


def test_masks_past_the_length_or_the_limit_are_not_predicted(pretrainer):
    model = with_tokenizer(pretrainer, SPM_MODEL_PATH, 16, top_k=2, max_masks=2)
    texts = [
        "a " * 20 + "[MASK]",  # past 16 pieces
        "[MASK] [MASK] [MASK]",  # the third is past max_masks
        "no mask at all",
        "",
    ]
    out = model.predict(texts, verbose=0)
    assert out["masks"].tolist() == [1, 3, 0, 0]
    assert (out["token_ids"][0] == -1).all() and (out["token_ids"][1] >= 0).all()
    assert (out["token_ids"][2:] == -1).all() and (out["scores"][2:] == 0).all()
    filled = model.fill_mask(texts)
    assert filled[0] == [[]] and [len(m) for m in filled[1]] == [2, 2, 0]
    assert filled[2] == [] and filled[3] == []
    assert filled[1][0][0]["text"].endswith(" [MASK] [MASK]")
    # Padded to each batch's longest text: the same candidates.
    dynamic = with_tokenizer(
        pretrainer, SPM_MODEL_PATH, 16, top_k=2, max_masks=2, dynamic_length=True
    )
    got = dynamic.predict(texts, verbose=0)
    np.testing.assert_array_equal(got["token_ids"], out["token_ids"])
    np.testing.assert_allclose(got["scores"], out["scores"], atol=1e-6)


def test_the_savedmodel_and_the_keras_file_give_the_same(pretrainer, tmp_path):
    import keras

    model = with_tokenizer(pretrainer, SPM_MODEL_PATH, 32, top_k=3)
    model.serving_rows = 2  # a request of 3 rows runs in two slices
    expected = model.predict(TEXTS, verbose=0)
    model.export(str(tmp_path / "savedmodel"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "savedmodel")).signatures["serve"](
        texts=tf.constant(TEXTS)
    )
    for key, value in expected.items():
        np.testing.assert_array_equal(served[key].numpy(), value)
    model.save(tmp_path / "fill.keras")
    loaded = keras.saving.load_model(tmp_path / "fill.keras")
    assert (loaded.top_k, loaded.max_masks) == (3, 20)
    np.testing.assert_array_equal(
        loaded.predict(TEXTS, verbose=0)["scores"], expected["scores"]
    )
