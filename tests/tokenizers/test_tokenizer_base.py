"""AlbertTokenizerBase: one vocabulary API for both tokenizers, and its edges."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer
from albert_keras.tokenizers.tokenizer_base import AlbertTokenizerBase

WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "文", "text", "##s"]


def tokenizers():
    return [
        AlbertTokenizer(SPM_MODEL_PATH),
        AlbertWordPieceTokenizer(WORDPIECE, lowercase=False),
    ]


@pytest.mark.parametrize("tokenizer", tokenizers(), ids=lambda t: type(t).__name__)
def test_shared_vocabulary_api(tokenizer):
    assert isinstance(tokenizer, AlbertTokenizerBase)
    vocabulary = tokenizer.get_vocabulary()
    assert len(vocabulary) == tokenizer.vocabulary_size()
    for token_id in (0, 2, len(vocabulary) - 1):
        token = tokenizer.id_to_token(token_id)
        assert token == vocabulary[token_id]
        assert tokenizer.token_to_id(token) == token_id
    specials = tokenizer.special_token_ids
    assert list(specials) == ["pad", "unk", "cls", "sep", "mask"]
    assert specials["pad"] == 0
    assert tokenizer.token_to_id("no such token ~~") == specials["unk"]
    with pytest.raises(ValueError, match=r"`token_id` must be in \[0, "):
        tokenizer.id_to_token(len(vocabulary))
    # Python strings in; a scalar gives 1-D ids, a batch ragged ids.
    batch = tokenizer(["text", "中文"])
    assert isinstance(batch, tf.RaggedTensor) and batch.dtype == tf.int32
    np.testing.assert_array_equal(tokenizer("text").numpy(), batch[0].numpy())
    pieces = tokenizer.tokenize_pieces(["text"])
    assert [p.decode() for p in pieces[0].numpy()] == [
        tokenizer.id_to_token(i) for i in batch[0].numpy()
    ]
    # Special ids (dense or ragged) are dropped before detokenizing.
    ids = batch[0].numpy().tolist()
    wrapped = [[specials["cls"], *ids, specials["sep"], 0, 0]]
    assert tokenizer.detokenize(tf.constant(wrapped)).numpy().tolist() == (
        tokenizer.detokenize(tf.ragged.constant([ids])).numpy().tolist()
    )
    config = tokenizer.get_config()
    assert config["lowercase"] == tokenizer.lowercase
    assert config["dtype"]["config"]["name"] == "int32"


@pytest.mark.parametrize("tokenizer", tokenizers(), ids=lambda t: type(t).__name__)
def test_detokenize_one_text_and_python_lists(tokenizer):
    """`detokenize(tokenizer("text"))` failed: 1-D ids (what one string
    gives) were refused by RaggedTensor ("rank ... greater than 1")."""
    texts = ["texts 中文", "text"]
    batch = tokenizer.detokenize(tokenizer(texts)).numpy().tolist()
    one = tokenizer.detokenize(tokenizer(texts[0]))
    assert one.shape.rank == 0 and one.numpy() == batch[0]
    ids = [row.tolist() for row in tokenizer(texts).numpy()]
    assert tokenizer.detokenize(ids).numpy().tolist() == batch  # ragged lists
    assert tokenizer.detokenize(ids[0]).numpy() == batch[0]  # one list
    assert tokenizer.detokenize(np.array([ids[1]])).numpy().tolist() == batch[1:]
    assert tokenizer.detokenize([]).numpy() == b""
    for wrong in (3, [[[1]]], np.array([1.5])):
        with pytest.raises(ValueError, match="takes integer ids of one text"):
            tokenizer.detokenize(wrong)


def test_missing_vocabulary_messages():
    with pytest.raises(
        ValueError,
        match=r"^This AlbertTokenizer has no SentencePiece model yet: pass `proto` "
        r"\(a \.model path or bytes\), or load a saved model\.$",
    ):
        AlbertTokenizer().vocabulary_size()
    with pytest.raises(
        ValueError,
        match=r"This AlbertWordPieceTokenizer has no vocabulary yet: pass "
        r"`vocabulary` \(a vocab\.txt path or a list\), or load a saved model\.",
    ):
        AlbertWordPieceTokenizer()(["text"])
    assert AlbertWordPieceTokenizer().vocabulary is None


def test_serialized_names_are_unchanged():
    for cls in (AlbertTokenizer, AlbertWordPieceTokenizer):
        name = keras.saving.get_registered_name(cls)
        assert name == f"albert_keras>{cls.__name__}"
        assert keras.saving.get_registered_object(name) is cls
