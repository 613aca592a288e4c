"""Bad input (issue 3, item 5): handled at serving time, or refused with the fix.

Texts never fail: empty strings and batches, texts of a megabyte (cut at
packing, ids as the official code's), NULs, bytes that are not UTF-8 (dropped,
as the official `convert_to_unicode`), through the tokenizers, the text model
and its exported SavedModel. Files that are not vocabularies, and
vocabularies without ALBERT's special tokens, are refused with a message that
names the problem and the fix. Batches of pairs that do not pair up are an
error, not silently wrong features.
"""

import gzip
import re

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config
from official_tokenization import official_classifier_features, tokenization
from tokenizer_cases import corpus_lines

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.models import with_tokenizer
from albert_keras.tokenizers import (
    AlbertPacker,
    AlbertSpanPacker,
    AlbertTokenizer,
    AlbertWordPieceTokenizer,
    load_tokenizer,
)

LENGTH = 32


@pytest.fixture(scope="module")
def long_text():
    """About 1 MB of real English paragraphs in one string."""
    lines = corpus_lines("en_brown.txt", 3000) + corpus_lines("en_austen.txt", 3000)
    text, size = [], 0
    for line in lines:
        text.append(line)
        size += len(line) + 1
        if size > 1_000_000:
            break
    return " ".join(text)


@pytest.fixture(scope="module")
def served(spm_models, tmp_path_factory):
    """A classifier with its tokenizer, and its SavedModel loaded back."""
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    config = micro_config(vocab_size=3000, max_position_embeddings=LENGTH)
    model = with_tokenizer(AlbertClassifier(AlbertBackbone(config), 3), tokenizer, 32)
    path = str(tmp_path_factory.mktemp("bad_input") / "serving")
    model.export(path, verbose=False)
    return model, tf.saved_model.load(path)


def bad_texts(long_text):
    return [
        b"",
        b" \t\n ",
        long_text.encode(),  # 1 MB of words
        b"x" * 1_000_000,  # 1 MB without a space
        "\u5929\u4e0b".encode() * 100_000,  # 200,000 CJK characters
        b"\x00" * 100 + b"a\x00b",  # NULs
        b"caf\xe9 \xff\xfe bytes that are not UTF-8 \xed\xa0\x80",
        b"\xff" * 1000,  # nothing left once the bad bytes go
    ]


def leading_agreement(ours, theirs):
    """How many leading ids two sequences share."""
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            return i
    return min(len(ours), len(theirs))


def test_tokenizer_ids_of_bad_text_are_the_official_ones(spm_models, long_text):
    """Every id as the official tokenizer's; in a megabyte of words, the first
    tens of thousands (a model packs at most 512).

    Both SentencePiece encoders sum path scores in float over the whole text,
    in different orders; past ~100,000 characters of words a near tie can go
    the other way (measured: first difference at piece 28,761 of 308,875).
    """
    model = spm_models["uncased"]
    texts = bad_texts(long_text)
    ids = AlbertTokenizer(model)(tf.constant(texts)).to_list()
    official = tokenization.FullTokenizer(None, True, model)
    for index, (text, row) in enumerate(zip(texts, ids, strict=True)):
        # The official run_classifier: convert_to_unicode (bad bytes ignored),
        # preprocess_text, tokenize.
        unicode = tokenization.convert_to_unicode(text)
        pieces = official.tokenize(tokenization.preprocess_text(unicode, lower=True))
        expected = official.convert_tokens_to_ids(pieces)
        if index == 2:
            agree = leading_agreement(row, expected)
            print(f"1 MB of words: the first {agree} of {len(row)} ids as official")
            assert agree >= 20_000 and abs(len(row) - len(expected)) < 100
        else:
            assert row == expected, text[:50]
    assert ids[0] == [] and ids[1] == [] and ids[-1] == []
    assert len(ids[2]) > 150_000


def test_packing_of_a_megabyte_is_the_official_truncation(spm_models, long_text):
    model = spm_models["uncased"]
    pairs = [(long_text, None), (long_text, long_text[::-1]), ("short", long_text)]
    official = tokenization.FullTokenizer(None, True, model)
    tokenizer = AlbertTokenizer(model)
    for length in (8, LENGTH, 512):
        expected = official_classifier_features(official, pairs, length, True, True)
        ours = AlbertPacker.for_tokenizer(tokenizer, length)(
            tokenizer([a for a, _ in pairs]), tokenizer([b or "" for _, b in pairs])
        )
        assert ours["token_ids"].numpy().tolist() == [list(f[0]) for f in expected]
        assert ours["segment_ids"].numpy().tolist() == [list(f[1]) for f in expected]
        assert ours["padding_mask"].numpy().tolist() == [list(f[2]) for f in expected]


def test_saved_model_serves_bad_text_as_python_does(served, long_text):
    model, loaded = served
    texts = tf.constant(bad_texts(long_text))
    expected = model(texts)["logits"].numpy()
    got = loaded.serve(texts)["logits"].numpy()
    assert got.shape == (8, 3) and np.isfinite(got).all()
    assert max_abs_diff(got, expected) < 1e-5
    reverse = texts[::-1]
    pairs = loaded.serve_pairs(texts, reverse)["logits"].numpy()
    assert max_abs_diff(pairs, model((texts, reverse))["logits"].numpy()) < 1e-5
    # Rows that tokenize to nothing are "[CLS] [SEP]": empty and bad-byte rows
    # get the same prediction.
    np.testing.assert_allclose(got[0], got[-1], atol=1e-6)
    np.testing.assert_allclose(got[0], got[1], atol=1e-6)


def test_saved_model_serves_empty_batches(served):
    model, loaded = served
    none = tf.constant([], tf.string)
    assert loaded.serve(none)["logits"].shape == (0, 3)
    assert loaded.serve_pairs(none, none)["logits"].shape == (0, 3)
    empty = tf.constant(["", ""])
    expected = model(empty)["logits"].numpy()
    assert max_abs_diff(loaded.serve(empty)["logits"], expected) < 1e-5
    assert max_abs_diff(loaded.serve_pairs(empty, empty)["logits"], expected) < 1e-5


def test_pairs_that_do_not_pair_up_are_an_error(served, spm_models):
    model, loaded = served
    a, b = tf.constant(["one", "two"]), tf.constant(["three"])
    message = "must hold as many texts each"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        loaded.serve_pairs(a, b)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        model((a, b))
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        AlbertPacker(16)(tokenizer(a), tokenizer(b))
    span = AlbertSpanPacker(16, doc_stride=4, max_query_length=4)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        span(tokenizer(b), tokenizer(a))
    graph = tf.function(lambda x, y: AlbertPacker(16)(tokenizer(x), tokenizer(y)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        graph(a, b)


def test_wordpiece_bad_text(wordpiece_vocab):
    texts = [
        b"",
        "\u5929\u4e0b\u5927\u52bf".encode() * 250_000,  # 1M CJK characters
        b"y" * 1_000_000,  # one word over 200 characters: one [UNK]
        b"\x00a\x00 \xff\xfe\xed\xa0\x80 " + "\u4e2d\u6587".encode(),
        b"\x00a\x00 \xff\xfe\xed\xa0\x80 ok",
    ]
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab)
    ids = tokenizer(tf.constant(texts)).to_list()
    official = tokenization.FullTokenizer(wordpiece_vocab, do_lower_case=True)
    for text, row in zip(texts, ids, strict=True):
        tokens = official.tokenize(tokenization.convert_to_unicode(text))
        assert row == official.convert_tokens_to_ids(tokens), text[:50]
    assert len(ids[1]) == 1_000_000 and ids[2] == [100]


# --- files that are not vocabularies ----------------------------------------


@pytest.mark.parametrize("missing", ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
def test_wordpiece_vocabulary_without_a_special_token(tmp_path, missing):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u4e2d", "##s"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(t for t in tokens if t != missing) + "\n")
    pattern = re.escape(f"lacks the special tokens ['{missing}']") + ".*albert-keras"
    with pytest.raises(ValueError, match=pattern):
        AlbertWordPieceTokenizer(str(path))
    with pytest.raises(ValueError, match=pattern):
        load_tokenizer(str(path))


def test_wordpiece_vocabulary_with_pad_not_first(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\n[PAD]\n[CLS]\n[SEP]\n[MASK]\n")
    with pytest.raises(ValueError, match=r"'\[UNK\]' at id 0.*\[PAD\] must be the"):
        AlbertWordPieceTokenizer(str(path))


def test_files_that_are_not_vocabularies(tmp_path, spm_models, wordpiece_vocab):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Emma Woodhouse, handsome, clever, and rich\n" * 5)
    zipped = tmp_path / "corpus.txt.gz"
    zipped.write_bytes(gzip.compress(corpus.read_bytes()))
    not_a_model = "is not a SentencePiece model .*albert-keras vocab"
    for path in (corpus, zipped):
        with pytest.raises(ValueError, match=not_a_model):
            AlbertTokenizer(str(path))
    with pytest.raises(ValueError, match="is a folder; pass the vocabulary file"):
        AlbertTokenizer(str(tmp_path))
    # load_tokenizer takes a text file for a WordPiece vocabulary, a binary
    # one for a SentencePiece model, and says what is wrong with either.
    with pytest.raises(ValueError, match=r"lacks the special tokens \['\[PAD\]'"):
        load_tokenizer(str(corpus))
    with pytest.raises(ValueError, match=not_a_model):
        load_tokenizer(str(zipped))
    with pytest.raises(ValueError, match="looks like a WordPiece vocab.txt"):
        AlbertTokenizer(wordpiece_vocab)
    with pytest.raises(ValueError, match="not UTF-8 text.*AlbertTokenizer"):
        AlbertWordPieceTokenizer(spm_models["cased"])
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        AlbertTokenizer(b"\x00\x01garbage")


def test_sentencepiece_model_without_pad(tmp_path):
    lines = [f"line {i} of some text with words" for i in range(300)]
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_prefix=str(tmp_path / "nopad"),
        vocab_size=60,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    with pytest.raises(
        ValueError, match=r"no <pad> at id 0 \(pad_id=-1, id 0 is '<unk>'\).*--pad_id"
    ):
        AlbertTokenizer(str(tmp_path / "nopad.model"))
