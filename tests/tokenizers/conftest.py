"""Session fixtures: real text, and vocabularies trained on it by our own trainers."""

import sys

import pytest
from albert_test_case import corpus_paragraphs, corpus_path

from albert_keras.tokenizers.vocabulary import (
    OFFICIAL_OPTIONS,
    build_wordpiece_vocabulary,
    train_sentencepiece,
)

# Hand-picked lines where tokenizers drift from the official one.
EDGE_CASES = [
    "1,000, 2,5, and 10,000,000, then 3, or 40,000,000 dollars",  # digit + comma
    "in the $40,000,000 budget, 1990, 2,000,",  # SentencePiece score ties
    "Café naïve résumé Ångström Zürich São Paulo façade",  # accents
    "``quoted'' and \u201ccurly\u201d and 'single' ``",  # quotes (kept as they are)
    "tab\there\u00a0nbsp\u2003em\u3000ideographic  two  \n newline\r\x0b\x0c\x1c",
    "\ufb01ne \u216b \u338f \u00bd \u00b4x \u00a8y \u1fed \ufe70",  # NFKD forms
    "\u039f\u0394\u039f\u03a3 \u039a\u0391\u0399 \u03a3 A\u03a3 A'\u03a3 "
    "A\u03a3.\u03a3 X",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e",  # Devanagari
    "\u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd \u0627\u0644\u0652\u0639\u064e",
    "a\x00b \x00 NUL\x00",  # NUL characters
    "zero\u200bwidth\u200d\ufeffbom\u00adsoft\u2028line\u2029para\x85next",
    "\u0130stanbul \u00df STRASSE \u2c2f \ua7c0 \U00010570 \u1e9e",  # case oddities
    "\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff21\uff22\uff23 "
    "\uff11\uff12\uff13\uff0c\u3002",  # fullwidth
    "\U0001f600 emoji \U0001f44d\U0001f3fd and \u2603 \ue000 private",
    "\uf900\uf901 \u3042\u30a2 \ud55c\uad6d\uc5b4 \u4e2d\u6587 mixed",
    "\u0301leading combining \u20dd enclosing \u0489 \U0001d165 stem",
    # Unassigned in Python's Unicode, decomposed by ICU's newer one
    "\U0001ccd6\U0001ccf1 \U0001e030\U0001e051 \U000105c9 \U00016121 outlined",
    "   leading and trailing   ",
    " ",
    "",
    "x" * 3000,
]


# The two parts of the zh_sanguo.txt slice (the first 8 chapters of 三国演义)
# that the Chinese tests read as two texts.
SANGUO_EARLY = "zh_sanguo.txt, chapters 1-3"
SANGUO_LATER = "zh_sanguo.txt, chapters 4-8"


def corpus_lines(name, count, offset=0):
    """`count` paragraphs spread evenly over a corpus (all of a small one)."""
    lines = corpus_paragraphs(name)
    step = max(1, len(lines) // count)
    return lines[offset::step][:count]


def corpus_documents(name):
    """The documents of a corpus (lists of paragraphs, split at blank lines)."""
    with open(corpus_path(name), encoding="utf-8") as f:
        documents = f.read().split("\n\n")
    return [[p for p in d.split("\n") if p.strip()] for d in documents if d.strip()]


@pytest.fixture(scope="session")
def english():
    """Real paragraphs of each English corpus: 2,000 spread over Austen's
    novels; every paragraph but the first of the small Brown slice."""
    return {
        name: corpus_lines(name, 2000, offset=1)
        for name in ("en_austen.txt", "en_brown.txt")
    }


@pytest.fixture(scope="session")
def chinese():
    """Two parts of the Chinese slice of tests/data: chapters 1-3 but their
    first paragraph (the title), and chapters 4-8 whole."""
    chapters = corpus_documents("zh_sanguo.txt")
    assert len(chapters) == 8, len(chapters)
    return {
        SANGUO_EARLY: [p for chapter in chapters[:3] for p in chapter][1:],
        SANGUO_LATER: [p for chapter in chapters[3:] for p in chapter],
    }


# Four user-defined digit-comma pieces make the official `encode_pieces`
# re-split fire on real text (a small unigram vocabulary learns none).
DIGIT_COMMA_PIECES = ["0,", "1,", "5,", "000,"]


@pytest.fixture(scope="session")
def spm_models(tmp_path_factory):
    """SentencePiece models with the official layout and trainer options.

    "uncased" and "cased" as `albert-keras vocab` makes them; "digit_comma"
    (cased) adds DIGIT_COMMA_PIECES as user-defined symbols.
    """
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    text = corpus_lines("en_brown.txt", 1000) + corpus_lines("en_austen.txt", 800)
    corpus.write_text("\n".join(text), encoding="utf-8")
    brown = folder / "brown.txt"
    brown.write_text("\n".join(corpus_lines("en_brown.txt", 1000)), encoding="utf-8")
    return {
        "uncased": train_sentencepiece(corpus, str(folder / "uncased"), 3000, True),
        "cased": train_sentencepiece(corpus, str(folder / "cased"), 3000, False),
        "digit_comma": train_sentencepiece(
            brown,
            str(folder / "digit_comma"),
            2000,
            False,
            user_defined_symbols=OFFICIAL_OPTIONS["user_defined_symbols"]
            + DIGIT_COMMA_PIECES,
        ),
    }


@pytest.fixture(scope="session")
def wordpiece_vocab(tmp_path_factory):
    """A WordPiece vocab.txt (release layout) from Chinese and some English text."""
    folder = tmp_path_factory.mktemp("wordpiece")
    corpus = folder / "zh.txt"
    text = corpus_lines("zh_sanguo.txt", 1500) + corpus_lines("en_brown.txt", 150)
    corpus.write_text("\n".join(text), encoding="utf-8")
    return build_wordpiece_vocabulary(corpus, folder / "vocab.txt", 8000)


def pytest_terminal_summary(terminalreporter):
    """The exact-match rates the tests measured, in every run's summary."""
    helper = sys.modules.get("official_tokenization")
    if helper is None or not helper.EXACT_MATCHES:
        return
    terminalreporter.section("exact match with the official albert.tokenization")
    for what, identical, compared in helper.EXACT_MATCHES:
        terminalreporter.write_line(
            f"{what}: {identical}/{compared} identical ({identical / compared:.2%})"
        )
