"""`AlbertEmbeddingTextModel` against transformers and the official tokenizer,
and served."""

import os
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.models import AlbertEmbeddingTextModel, with_tokenizer
from albert_keras.models.embedding_pooling import POOLINGS
from albert_keras.sample_text import SPM_MODEL_PATH

TEXTS = [
    "Emma Woodhouse, handsome, clever, and rich, with a comfortable home.",
    "It rained.",
    "She was the youngest of the two daughters of a most affectionate father "
    "and had in consequence been mistress of his house from a very early period "
    "of her life and her mother had died too long ago for her to have more than "
    "an indistinct remembrance of her caresses",
    "",
]
LENGTH = 32  # the third text is cut


@pytest.fixture(scope="module")
def backbone():
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertBackbone(config)
    rng = np.random.default_rng(0)
    for w in model.weights:
        w.assign(rng.normal(0, 0.1, w.shape).astype("float32"))
    return model


def numpy_pool(sequence, pooled, mask, pooling, normalize=False):
    """The reference pooling: sentence-transformers' mean and max, in NumPy."""
    sequence, mask = np.asarray(sequence, "float64"), np.asarray(mask)[..., None]
    vectors = {
        "mean": (sequence * mask).sum(1) / mask.sum(1),
        "max": np.where(mask > 0, sequence, -1e9).max(1),
        "cls": sequence[:, 0],
        "pooled": np.asarray(pooled, "float64"),
    }[pooling]
    if normalize:
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def test_vectors_are_transformers_outputs_pooled(backbone, tmp_path):
    """transformers' tokenizer and AlbertModel on the same folder, pooled in
    NumPy: every pooling, with and without normalizing."""
    torch = pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    transformers = pytest.importorskip("transformers")
    from checkpoints_convert.hf_writer import save_hf_checkpoint

    save_hf_checkpoint(backbone, tmp_path, vocab=SPM_MODEL_PATH)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    theirs = transformers.AlbertModel.from_pretrained(str(tmp_path)).eval()
    feed = tokenizer(
        TEXTS, padding=True, truncation=True, max_length=LENGTH, return_tensors="pt"
    )
    with torch.no_grad():
        out = theirs(**feed)
    mask = feed["attention_mask"].numpy()
    for pooling in POOLINGS:
        for normalize in (False, True):
            ours = with_tokenizer(
                backbone, SPM_MODEL_PATH, LENGTH, pooling=pooling, normalize=normalize
            )
            assert isinstance(ours, AlbertEmbeddingTextModel)
            expected = numpy_pool(
                out.last_hidden_state.numpy(),
                out.pooler_output.numpy(),
                mask,
                pooling,
                normalize,
            )
            got = ours(TEXTS)["embeddings"]  # eager: no trace per model
            diff = max_abs_diff(got, expected)
            assert diff < 1e-5, (pooling, normalize, diff)


def _official_inputs(texts, length):
    """`[CLS] ids [SEP]` of the official tokenizer, cut and padded to `length`."""
    folder = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tokenizers")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from official_tokenization import official_ids

    rows = [
        [2, *ids[: length - 2], 3] for ids in official_ids(SPM_MODEL_PATH, texts, True)
    ]
    ids = np.zeros((len(rows), length), "int32")
    mask = np.zeros((len(rows), length), "int32")
    for i, row in enumerate(rows):
        ids[i, : len(row)], mask[i, : len(row)] = row, 1
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask}


def test_vectors_are_the_official_ids_pooled(backbone):
    """The official tokenizer's ids through the backbone, pooled in NumPy,
    padded to the full length or to each batch's longest text."""
    inputs = _official_inputs(TEXTS, LENGTH)
    out = backbone.predict(inputs, verbose=0)
    for pooling in POOLINGS:
        expected = numpy_pool(
            out["sequence_output"],
            out["pooled_output"],
            inputs["padding_mask"],
            pooling,
        )
        for dynamic_length in (False, True):
            model = AlbertEmbeddingTextModel(
                backbone,
                _tokenizer(),
                LENGTH,
                pooling=pooling,
                dynamic_length=dynamic_length,
            )
            got = model(TEXTS)["embeddings"]  # eager: no trace per model
            assert max_abs_diff(got, expected) < 1e-5, (pooling, dynamic_length)
    # Through `predict`, a short text alone (padded to its 4 tokens) and
    # beside the others (padded to 32): the same vector.
    got = model.embed(TEXTS, batch_size=4)
    assert max_abs_diff(got, expected) < 1e-5
    assert max_abs_diff(model.embed(TEXTS[1])[0], got[1]) < 1e-5


def _tokenizer():
    from albert_keras.tokenizers import AlbertTokenizer

    return AlbertTokenizer(SPM_MODEL_PATH)


def test_served_saved_and_reloaded_the_same(backbone, tmp_path):
    """The SavedModel (in rows of 2) and the .keras file give the vectors of
    the model; a fine-tuned classifier's encoder is taken."""
    classifier = AlbertClassifier(backbone, num_classes=2)
    model = with_tokenizer(classifier, SPM_MODEL_PATH, LENGTH, pooling="max")
    assert model.backbone is backbone
    model.serving_rows = 2
    expected = model.embed(TEXTS)
    assert expected.shape == (4, 64) and model.embed([]).shape == (0, 64)
    model.export(str(tmp_path / "savedmodel"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "savedmodel")).signatures["serve"]
    got = served(texts=tf.constant(TEXTS))["embeddings"].numpy()
    assert max_abs_diff(got, expected) < 1e-6
    model.save(tmp_path / "embed.keras")
    loaded = keras.saving.load_model(tmp_path / "embed.keras")
    assert (loaded.pooling, loaded.normalize) == ("max", False)
    assert max_abs_diff(loaded.embed(TEXTS), expected) < 1e-6


def test_bad_arguments_are_refused(backbone):
    with pytest.raises(ValueError, match="`pooling` must be one of mean, max"):
        AlbertEmbeddingTextModel(backbone, _tokenizer(), 16, pooling="average")
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="needs an AlbertBackbone .* Sequential"):
        AlbertEmbeddingTextModel(dense, _tokenizer(), 16)
