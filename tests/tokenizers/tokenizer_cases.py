"""The tokenizer tests' shared cases: hand-picked lines and corpus slices.

A module of its own, not `conftest.py`: with several test folders in one run
(`pytest tests/tokenizers tests/checkpoints_convert/...`) `from conftest
import` finds whichever folder's conftest Python imported last.
"""

from albert_test_case import corpus_paragraphs, corpus_path

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


# Four user-defined digit-comma pieces make the official `encode_pieces`
# re-split fire on real text (a small unigram vocabulary learns none).
DIGIT_COMMA_PIECES = ["0,", "1,", "5,", "000,"]
