"""Session fixtures: real text, and vocabularies trained on it by our own trainers."""

import sys

import pytest
from tokenizer_cases import (
    DIGIT_COMMA_PIECES,
    SANGUO_EARLY,
    SANGUO_LATER,
    corpus_documents,
    corpus_lines,
)

from albert_keras.tokenizers.vocabulary import (
    OFFICIAL_OPTIONS,
    build_wordpiece_vocabulary,
    train_sentencepiece,
)


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
