"""`masked_text_ids` against the official tokenization of the whole text.

A `[MASK]` written in a text must stand where the official tokenizer puts the
piece it hides: the ids equal the official ids of the unmasked text with that
piece replaced by the mask id (as `create_pretraining_data` masks).
"""

import random

import pytest
import tensorflow as tf
from official_tokenization import (
    official_ids,
    official_wordpiece_ids,
    record_exact_match,
    tokenization,
)

from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs
from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer
from albert_keras.tokenizers.masked_text import masked_text_ids

UNDERLINE = "\u2581"


def _masked_cases(lines, pieces_of, starts_only, seed=0):
    """(masked text, its official ids with the piece masked) per line: one
    piece each, a word-start piece (a whole word) or one inside a word."""
    rng = random.Random(seed)
    cases = []
    for _line, pieces, ids in pieces_of(lines):
        where = [
            i
            for i, p in enumerate(pieces)
            if p.startswith(UNDERLINE) == starts_only
            and p != UNDERLINE
            and (i == 0 or pieces[i - 1] != UNDERLINE)  # "▁" "such": no text says it
        ]
        if not where:
            continue
        i = rng.choice(where)
        hidden = UNDERLINE + "[MASK]" if starts_only else "[MASK]"
        text = "".join([*pieces[:i], hidden, *pieces[i + 1 :]])
        text = text.replace(UNDERLINE, " ").strip()
        cases.append((text, [*ids[:i], 4, *ids[i + 1 :]]))
    return cases


def _official_pieces(lines):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model_file=SPM_MODEL_PATH)
    for line in lines:
        pieces = tokenizer.tokenize(tokenization.preprocess_text(line, lower=True))
        yield line, pieces, tokenizer.convert_tokens_to_ids(pieces)


@pytest.fixture(scope="module")
def lines():
    return [p[:400] for p in read_paragraphs(400)]


def test_a_masked_word_is_the_official_pieces_with_that_word_masked(lines):
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    cases = _masked_cases(lines, _official_pieces, starts_only=True)
    assert len(cases) >= 300
    ours = masked_text_ids(tokenizer, [t for t, _ in cases]).to_list()
    misses = [t for (t, ids), got in zip(cases, ours, strict=True) if got != ids]
    record_exact_match("[MASK] for a word", len(cases) - len(misses), len(cases))
    assert not misses, misses[:3]


def test_a_mask_inside_a_word_keeps_the_pieces_around_it(lines):
    """ "[MASK]ing" and "[MASK]." continue a word: no SentencePiece "▁" before
    them. (SentencePiece cuts words one by one, so the text before a mask
    is cut as inside the whole text.)"""
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    cases = _masked_cases(lines, _official_pieces, starts_only=False, seed=1)
    assert len(cases) >= 300
    ours = masked_text_ids(tokenizer, [t for t, _ in cases]).to_list()
    misses = [t for (t, ids), got in zip(cases, ours, strict=True) if got != ids]
    record_exact_match("[MASK] inside a word", len(cases) - len(misses), len(cases))
    assert not misses, misses[:3]
    # With SentencePiece's "▁" in front of the text after a mask (what
    # transformers does), 60 of these 400 differ.
    prefixed = [
        [*tokenizer(a).numpy().tolist(), 4, *tokenizer(b).numpy().tolist()]
        for a, b in (t.split("[MASK]", 1) for t, _ in cases)
    ]
    wrong = sum(got != ids for got, (_, ids) in zip(prefixed, cases, strict=True))
    assert wrong >= 40, wrong


def test_mask_literals_and_edge_cases():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    texts = ["Emma is a [MASK].", "[MASK][MASK]", "", "no mask", "[mask] is text"]
    got = masked_text_ids(tokenizer, texts).to_list()
    expected = official_ids(
        SPM_MODEL_PATH, ["Emma is a lady.", "", "", "no mask"], True
    )
    assert got[0] == [*expected[0][:3], 4, expected[0][4]]
    assert got[1] == [4, 4]
    assert got[2] == [] and got[3] == expected[3]
    assert 4 not in got[4]  # only "[MASK]" as written is a mask
    # In a traced function (a SavedModel's), the same ids.
    traced = tf.function(lambda t: masked_text_ids(tokenizer, t).to_tensor(-1))
    assert traced(tf.constant(texts)).numpy().tolist()[0][:5] == got[0]


def test_wordpiece_masks_are_the_official_pieces_masked(wordpiece_vocab, chinese):
    """The *_zh models: a masked character (or word piece) in Chinese text."""
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab)
    official = tokenization.FullTokenizer(wordpiece_vocab, do_lower_case=True)
    lines = [line[:200] for lines in chinese.values() for line in lines][:200]
    rng = random.Random(2)
    texts, expected = [], []
    for line in lines:
        pieces = official.tokenize(line)
        if not pieces:
            continue
        i = rng.randrange(len(pieces))
        if pieces[i].startswith("##") or (
            i + 1 < len(pieces) and pieces[i + 1].startswith("##")
        ):
            continue  # "[MASK]" between word pieces has no text of its own
        words = [*pieces[:i], "[MASK]", *pieces[i + 1 :]]
        texts.append(" ".join(w for w in words).replace(" ##", ""))
        ids = official_wordpiece_ids(wordpiece_vocab, [line], True)[0]
        expected.append([*ids[:i], tokenizer.token_to_id("[MASK]"), *ids[i + 1 :]])
    assert len(texts) >= 100
    got = masked_text_ids(tokenizer, texts).to_list()
    misses = [t for t, a, b in zip(texts, got, expected, strict=True) if a != b]
    record_exact_match("[MASK] in WordPiece text", len(texts) - len(misses), len(texts))
    assert not misses, misses[:3]
