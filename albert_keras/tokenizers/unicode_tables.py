"""The official tokenizer's character tests, as RE2 classes and tables.

The official `tokenization.py` decides with Python's `unicodedata` and `str`
methods: `str.split()` whitespace, `unicodedata.combining`, categories Cc, Cf,
Zs, Mn and P*, `str.lower()`, NFKD / NFD. RE2's `\\p{..}` classes and ICU's
case mapping and normalization follow other Unicode versions and other
definitions (`\\p{Mn}` is not "combining class != 0": Devanagari vowel signs
are Mn with class 0, which the official code keeps), so every class here is
computed from the running Python, for every code point, and written out as
explicit ranges; the `*_fixups` are where TensorFlow's ICU ops differ from
Python. The tables are computed once per process and baked into the graph as
constants (by `unicode_ops`), so an exported model keeps them.

Example:
>>> ranges("whitespace")[:2]
((9, 13), (28, 32))
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

SIGMA = 0x3A3  # GREEK CAPITAL LETTER SIGMA, lowercased by context in Python
FINAL_SIGMA = 0x3C2
# Everything Python's Unicode database assigns lies below U+40000 or in
# U+E0000-U+E0FFF (tags, variation selectors); the rest is private use or
# unassigned, which no test here matches.
_SCANNED = (range(0x40000), range(0xE0000, 0xE1000))


def _code_points() -> np.ndarray:
    scanned = np.concatenate([np.arange(block.start, block.stop) for block in _SCANNED])
    return scanned[(scanned < 0xD800) | (scanned > 0xDFFF)]


# The official `BasicTokenizer._is_chinese_char`'s blocks.
_CJK = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip
_ASCII_PUNCTUATION = ((33, 47), (58, 64), (91, 96), (123, 126))
_NAMES = (
    "whitespace", "other_whitespace", "combining", "clean_drop", "clean_space",
    "nonspacing_mark", "punctuation", "cjk", "case_ignorable", "cased_stop",
)  # fmt: skip


def _is_punctuation(char: str) -> bool:
    # The official `_is_punctuation`: non-alphanumeric ASCII, or category P*.
    cp = ord(char)
    if any(first <= cp <= last for first, last in _ASCII_PUNCTUATION):
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(cp: int) -> bool:
    # The official `BasicTokenizer._is_chinese_char`.
    return any(first <= cp <= last for first, last in _CJK)


def _within(points: np.ndarray, blocks) -> np.ndarray:
    return np.logical_or.reduce([(points >= a) & (points <= b) for a, b in blocks])


@functools.cache
def _characters() -> tuple[np.ndarray, list[str]]:
    """The scanned code points, and each as a one-character string."""
    points = _code_points()
    return points, list(map(chr, points.tolist()))


@functools.cache
def _lowered() -> list[str]:
    """`str.lower()` of each scanned character on its own."""
    return list(map(str.lower, _characters()[1]))


@functools.cache
def _category_masks() -> dict[str, np.ndarray]:
    """The tests decided by `unicodedata` and `str.isspace`, for every character.

    whitespace: `str.split()` / `str.strip()` whitespace (preprocess_text's
    collapse); combining: what preprocess_text drops after NFKD; clean_drop:
    what `_clean_text` drops (controls, formats, NUL, U+FFFD); clean_space:
    what it turns into a space (whitespace_tokenize then splits on `str.split()`
    whitespace, of which U+2028 and U+2029 are still left); nonspacing_mark:
    what `_run_strip_accents` drops after NFD.
    """
    points, chars = _characters()
    category = np.array(list(map(unicodedata.category, chars)))
    space = np.fromiter(map(str.isspace, chars), bool, len(chars))
    combining = np.fromiter(map(unicodedata.combining, chars), np.int64, len(chars))
    control = (category == "Cc") | (category == "Cf")
    tab_or_newline = np.isin(points, (9, 10, 13))
    return {
        "whitespace": space,
        "other_whitespace": space & (points != 32),
        "combining": combining != 0,
        "clean_drop": ~tab_or_newline & (np.isin(points, (0, 0xFFFD)) | control),
        "clean_space": (points != 32)
        & (tab_or_newline | (category == "Zs") | (space & ~control)),
        "nonspacing_mark": category == "Mn",
        "punctuation": _within(points, _ASCII_PUNCTUATION)
        | np.char.startswith(category, "P"),
        "cjk": _within(points, _CJK),
    }


def _final_sigma_after(prefix: str) -> np.ndarray:
    """Whether `(prefix + char + "Σ").lower()` ends in "ς", for every character.

    One `lower()` call for all: each group starts with a space, which is
    neither cased nor case-ignorable, so it ends the context both ways and
    every group is lowered as it would be alone.
    """
    chars = _characters()[1]
    text = "".join([f" {prefix}{char}\u03a3" for char in chars])
    lowered = np.frombuffer(text.lower().encode("utf-32-le"), np.uint32)
    lengths = np.fromiter(map(len, _lowered()), np.int64, len(chars))
    ends = np.cumsum(lengths + len(prefix) + 2) - 1
    if ends[-1] != lowered.size - 1:
        raise AssertionError("a character lowercased differently inside a group")
    return lowered[ends] == FINAL_SIGMA


@functools.cache
def _sigma_masks() -> dict[str, np.ndarray]:
    """(case-ignorable, cased and not case-ignorable), as Python's lower() sees them.

    Python lowercases "Σ" to "ς" when a cased letter precedes it and none
    follows it, skipping case-ignorable characters both ways. Python does not
    expose those two properties; asking `lower()` itself gets them right for
    this very Python.
    """
    cased_stop = _final_sigma_after("")
    skipped_or_cased = _final_sigma_after("A")
    return {"case_ignorable": skipped_or_cased & ~cased_stop, "cased_stop": cased_stop}


@functools.cache
def ranges(name: str) -> tuple[tuple[int, int], ...]:
    """Inclusive code point ranges of one of the official character tests.

    Args:
        name: one of "whitespace", "other_whitespace", "combining",
            "clean_drop", "clean_space", "nonspacing_mark", "punctuation",
            "cjk", "case_ignorable", "cased_stop", "lower_fixups",
            "nfd_fixups", "nfkd_fixups".

    Returns: sorted, merged `(first, last)` pairs.
    """
    if name == "lower_fixups":
        return _merge(_lower_fixups())
    if name in _NORMALIZE_FIXUPS:
        return _merge(_normalize_fixups(_NORMALIZE_FIXUPS[name]))
    if name not in _NAMES:
        raise ValueError(
            f"Unknown character test. Received: {name!r}. Allowed: "
            f"{sorted([*_NAMES, 'lower_fixups', *_NORMALIZE_FIXUPS])}"
        )
    masks = _sigma_masks() if name in ("case_ignorable", "cased_stop") else None
    mask = (masks or _category_masks())[name]
    return _merge(_characters()[0][mask])


def _merge(code_points) -> tuple[tuple[int, int], ...]:
    points = np.unique(np.asarray(code_points, np.int64))
    if not points.size:
        return ()
    gaps = np.flatnonzero(np.diff(points) != 1)
    firsts = np.concatenate([points[:1], points[gaps + 1]])
    lasts = np.concatenate([points[gaps], points[-1:]])
    return tuple(zip(firsts.tolist(), lasts.tolist(), strict=True))


def regex_class(name: str) -> str:
    """An RE2 character class (`[...]`) of exactly the code points of `name`."""

    def esc(cp):
        return f"\\x{{{cp:x}}}"

    parts = [esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges(name)]
    return "[" + "".join(parts) + "]"


@functools.cache
def lowercase_map() -> tuple[np.ndarray, np.ndarray]:
    """(code points, their `str.lower()`) where lowercasing changes the character.

    U+0130 (İ) lowercases to "i" + U+0307 in Python; the table keeps "i": where
    it matters the official code then strips U+0307 anyway (NFKD and the
    removal of combining marks run first for SentencePiece; accent stripping
    follows lowercasing for WordPiece). Capital sigma maps to "σ"; the final
    form is decided in context.
    """
    points, chars = _characters()
    lowered = _lowered()
    changed = [
        i for i, (c, low) in enumerate(zip(chars, lowered, strict=True)) if c != low
    ]
    for i in changed:
        if len(lowered[i]) > 1 and points[i] != 0x130:
            raise AssertionError(f"unexpected multi-character lower of {points[i]:x}")
    values = [ord(lowered[i][0]) for i in changed]
    return points[changed].astype(np.int32), np.array(values, np.int32)


@functools.cache
def _lower_fixups() -> tuple[int, ...]:
    """Characters `tf.strings.lower(encoding="utf-8")` gets wrong for Python.

    NUL (the op stops there), capital sigma (context), and characters ICU's
    older case tables do not know, found by running the op on every code point.
    """
    import tensorflow as tf

    points, chars = _characters()
    with tf.init_scope():  # eager, even when first asked inside a tf.function
        encoded = tf.constant([char.encode("utf-8") for char in chars])
        lowered = tf.strings.lower(encoded, encoding="utf-8").numpy()
    expected = [low.encode("utf-8") for low in _lowered()]
    wrong = [got != want for got, want in zip(lowered, expected, strict=True)]
    return tuple(sorted({*points[wrong].tolist(), 0, SIGMA}))


_NORMALIZE_FIXUPS = {"nfd_fixups": "NFD", "nfkd_fixups": "NFKD"}
# Each character between a mark of class 240 and one of class 1: a
# decomposition shows, and so does any combining class ICU gives the
# character (the three are then reordered; to Python it is a starter).
_PROBE = "\u0345{}\u0334"


@functools.cache
def _normalize_fixups(form: str) -> tuple[int, ...]:
    """Characters tf-text's `normalize_utf8(form)` (ICU) normalizes otherwise than
    Python's `unicodedata`.

    ICU follows a newer Unicode: it decomposes (or gives a combining class to)
    characters Python 3.11's Unicode 14 has not assigned, e.g. U+1CCD6 OUTLINED
    LATIN CAPITAL LETTER A, "A" to ICU and itself to Python. Found by running
    the op on every character between two marks.
    """
    import tensorflow as tf
    import tensorflow_text as tf_text

    points, chars = _characters()
    # One text, the probes apart by newlines (starters neither op changes):
    # each is normalized as it would be alone.
    chars = [char for char in chars if char != "\n"]
    text = "\n".join([_PROBE.format(char) for char in chars])
    with tf.init_scope():  # eager, even when first asked inside a tf.function
        got = tf_text.normalize_utf8(text, form).numpy().decode().split("\n")
    want = unicodedata.normalize(form, text).split("\n")
    wrong = [a != b for a, b in zip(got, want, strict=True)]
    return tuple(points[points != 10][wrong].tolist())
