"""Random text (a fixed seed) against the official albert.tokenization.

EDGE_CASES and the per-class lines try each special character alone; here
they mix: runs of whitespace, combining marks, case oddities, characters of
a newer Unicode than Python's, controls, CJK, Hangul, fullwidth forms,
numbers with commas, any code point (unassigned ones too) and vocabulary
pieces glued together.
"""

import random

import pytest
import tensorflow as tf
from official_tokenization import (
    official_ids,
    official_wordpiece_ids,
    record_exact_match,
)

from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer
from albert_keras.tokenizers.unicode_tables import ranges

COUNT = 300


def _members(*names):
    return [
        chr(cp) for name in names for a, b in ranges(name) for cp in range(a, b + 1)
    ]


def _span(first, last):
    return [chr(cp) for cp in range(first, last + 1)]


def random_texts(seed, pieces):
    """COUNT texts of up to 12 runs, each of 1-6 characters of one pool."""
    r = random.Random(seed)
    pools = [
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        list("0123456789,,.$"),
        _members("whitespace"),
        _members("combining"),
        _members("lower_fixups", "case_ignorable"),
        _members("nfkd_fixups", "nfd_fixups") or ["a"],
        _members("clean_drop"),
        _members("punctuation"),
        _span(0x4E00, 0x4FFF) + _span(0xF900, 0xF9FF) + _span(0x3040, 0x30FF),
        _span(0xAC00, 0xAD00) + _span(0x0E00, 0x0E7F) + _span(0x0590, 0x06FF),
        _span(0xFF01, 0xFF9F),
        list("\u03a3\u03a3\u0130\u00df\ufb01\u2581\x00\ufffd\u200b\u00ad\u2019"),
    ]
    texts = []
    for _ in range(COUNT):
        runs = []
        for _ in range(r.randint(0, 12)):
            kind = r.randrange(len(pools) + 2)
            if kind == len(pools):  # any code point but surrogates
                run = [
                    chr(r.choice([r.randrange(0xD800), r.randrange(0xE000, 0x110000)]))
                ]
            elif kind == len(pools) + 1:
                run = r.choices(pieces, k=r.randint(1, 3))
            else:
                run = r.choices(pools[kind], k=r.randint(1, 6))
            runs.append("".join(run) + r.choice(["", " ", " ", "\u3000", "\n"]))
        texts.append("".join(runs))
    return texts


@pytest.mark.parametrize("lower", [True, False])
def test_random_text_sentencepiece(spm_models, lower):
    """Identical ids, but where two orders of the same pieces tie exactly
    (tf-text's float path scores; see AlbertTokenizer): rare, counted."""
    model = spm_models["uncased" if lower else "cased"]
    tokenizer = AlbertTokenizer(model, lowercase=lower)
    pieces = [p.lstrip("\u2581") for p in tokenizer.get_vocabulary()[5:]]
    texts = random_texts(f"spm-{lower}", pieces)
    ours = tokenizer(tf.constant(texts)).to_list()
    theirs = official_ids(model, texts, lower)
    misses = [(t, a, b) for t, a, b in zip(texts, ours, theirs, strict=True) if a != b]
    case = "uncased" if lower else "cased"
    record_exact_match(
        f"SentencePiece ids, random text, {case}", COUNT - len(misses), COUNT
    )
    assert len(misses) <= 3, [ascii(t[:100]) for t, _, _ in misses]
    for text, a, b in misses:
        assert sorted(a) == sorted(b), ascii(text[:200])


@pytest.mark.parametrize("lower", [True, False])
def test_random_text_wordpiece(wordpiece_vocab, lower):
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab, lowercase=lower)
    pieces = [p.removeprefix("##") for p in tokenizer.get_vocabulary()[104:]]
    texts = random_texts(f"wordpiece-{lower}", pieces)
    ours = tokenizer(tf.constant(texts)).to_list()
    theirs = official_wordpiece_ids(wordpiece_vocab, texts, lower)
    misses = [t for t, a, b in zip(texts, ours, theirs, strict=True) if a != b]
    case = "uncased" if lower else "cased"
    record_exact_match(
        f"WordPiece ids, random text, {case}", COUNT - len(misses), COUNT
    )
    assert not misses, [ascii(t[:200]) for t in misses[:3]]
