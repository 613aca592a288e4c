"""SentencePieceEncoder: the official albert.tokenization ids, without TensorFlow."""

import os
import sys

import numpy as np
import pytest
import sentencepiece as spm
from albert_test_case import corpus_path
from sentencepiece import sentencepiece_model_pb2 as model_pb2

from albert_keras.pretraining.sentencepiece_encoder import SentencePieceEncoder
from albert_keras.pretraining.text_documents import read_documents
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers.unicode_tables import ranges

TOKENIZER_TESTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tokenizers")
ENGLISH = ("en_austen.txt", "en_brown.txt")
# Pieces ending in a digit and "," (none in austen-8k), so `encode_pieces`
# re-splits on real text.
DIGIT_COMMA_PIECES = ["0,", "1,", "5,", "000,", "\u25811,"]


def official_ids(model, lines, lower):
    if TOKENIZER_TESTS not in sys.path:
        sys.path.insert(0, TOKENIZER_TESTS)
    import official_tokenization

    return official_tokenization.official_ids(model, lines, lower)


def corpus_lines(name, count):
    """`count` segments spread over a corpus (all of a small one), as
    create-data reads them."""
    lines = [line for doc in read_documents(corpus_path(name)) for line in doc]
    return lines[:: max(1, len(lines) // count)][:count]


EDGE_LINES = [
    "1,000, 2,5, and 10,000,000, then 3, or 40,000,000 dollars 1990, 2,000,",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m \ufb01ne \u00bd \u216b",
    "``quoted'' and \u201ccurly\u201d  tab\there\u00a0nbsp\u3000ideographic \x1c x",
    "\u039f\u0394\u039f\u03a3 \u03a3 A\u03a3.\u03a3 \u0130stanbul STRASSE \u1e9e",
    "\u4e2d\u6587 \U0001f600 \u0301leading combining \ufeffbom\u00adsoft",
    "   ",
    "",
]


@pytest.fixture(scope="module")
def english_lines():
    return [line for name in ENGLISH for line in corpus_lines(name, 400)]


@pytest.fixture(scope="module")
def digit_comma_model(tmp_path_factory):
    """austen-8k with user-defined digit-comma pieces appended."""
    model = model_pb2.ModelProto()
    with open(SPM_MODEL_PATH, "rb") as f:
        model.ParseFromString(f.read())
    for piece in DIGIT_COMMA_PIECES:
        added = model.pieces.add()
        added.piece, added.score = piece, 0.0
        added.type = model_pb2.ModelProto.SentencePiece.USER_DEFINED
    path = tmp_path_factory.mktemp("spm") / "digit_comma.model"
    path.write_bytes(model.SerializeToString())
    return str(path)


@pytest.mark.parametrize("lower", [True, False])
def test_english_ids_identical_to_official(english_lines, lower):
    lines = english_lines + EDGE_LINES
    encoder = SentencePieceEncoder(SPM_MODEL_PATH, lower)
    ours = encoder(lines)
    theirs = official_ids(SPM_MODEL_PATH, lines, lower)
    misses = [line for line, a, b in zip(lines, ours, theirs, strict=True) if a != b]
    assert not misses, misses[:3]
    # Both preprocessing paths ran (non-ASCII: the 4 edge lines; the Brown
    # and Austen segments here are ASCII), on tens of thousands of ids.
    assert sum(not line.isascii() for line in lines) >= 4
    assert sum(len(row) for row in ours) > 50_000


def test_unicode_special_characters_identical_to_official():
    # Every character the official code treats specially (whitespace,
    # combining marks, lowercase fixups), between letters.
    lines = []
    for name in ("whitespace", "combining", "lower_fixups", "case_ignorable"):
        chars = [chr(c) for a, b in ranges(name) for c in range(a, b + 1)]
        for i in range(0, len(chars), 16):
            group = chars[i : i + 16]
            lines.append(" ".join(f"k{c}e" for c in group) + " 1" + "".join(group))
            lines.append(" ".join(f"A{c}\u03a3 \u03a3{c}x" for c in group))
    assert len(lines) > 100
    for lower in (True, False):
        ours = SentencePieceEncoder(SPM_MODEL_PATH, lower)(lines)
        assert ours == official_ids(SPM_MODEL_PATH, lines, lower)


@pytest.mark.parametrize("lower", [True, False])
def test_digit_comma_resplit_identical_to_official(digit_comma_model, lower):
    lines = corpus_lines("en_brown.txt", 1000) + EDGE_LINES
    lines = [line for line in lines if any(f"{d}," in line for d in "0123456789")]
    encoder = SentencePieceEncoder(digit_comma_model, lower)
    ours = encoder(lines)
    assert ours == official_ids(digit_comma_model, lines, lower)
    # The re-split really ran: plain SentencePiece gives other ids.
    plain = spm.SentencePieceProcessor(model_file=digit_comma_model)
    plain_ids = plain.encode(encoder.preprocess(lines))
    changed = sum(a != b for a, b in zip(ours, plain_ids, strict=True))
    assert changed >= 5, changed  # 10 of the Brown and edge lines
    comma = encoder.token_to_id(",")
    assert sum(row.count(comma) for row in ours) > sum(
        row.count(comma) for row in plain_ids
    )


def test_batches_and_threads_do_not_change_ids(english_lines):
    lines = english_lines + EDGE_LINES
    ids, lengths = SentencePieceEncoder(SPM_MODEL_PATH).encode(lines)
    encoder = SentencePieceEncoder(SPM_MODEL_PATH, num_threads=2, batch_size=97)
    batched_ids, batched_lengths = encoder.encode(lines)
    assert ids.dtype == np.int32 and lengths.dtype == np.int64
    assert len(lengths) == len(lines) and lengths.sum() == len(ids)
    assert np.array_equal(ids, batched_ids)
    assert np.array_equal(lengths, batched_lengths)


def test_vocabulary_facts_and_empty_input(tmp_path):
    encoder = SentencePieceEncoder(SPM_MODEL_PATH)
    special = {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
    assert encoder.special_token_ids == special
    assert encoder.vocabulary_size() == 8000
    processor = spm.SentencePieceProcessor(model_file=SPM_MODEL_PATH)
    assert encoder.pieces == [processor.id_to_piece(i) for i in range(8000)]
    assert encoder.token_to_id("no such piece") == 1
    ids, lengths = encoder.encode([])
    assert ids.shape == (0,) and lengths.shape == (0,)
    assert encoder([]) == [] and encoder(["", " \t "]) == [[], []]
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencePieceEncoder(str(bad))
