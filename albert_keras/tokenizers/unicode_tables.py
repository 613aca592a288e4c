"""The official tokenizer's character tests, as RE2 classes and in-graph lookups.

The official `tokenization.py` decides with Python's `unicodedata` and `str`
methods: `str.split()` whitespace, `unicodedata.combining`, categories Cc, Cf,
Zs, Mn and P*, `str.lower()`. RE2's `\\p{..}` classes and ICU's case mapping
follow other Unicode versions and other definitions (`\\p{Mn}` is not
"combining class != 0": Devanagari vowel signs are Mn with class 0, which the
official code keeps), so every class here is computed from the running
Python, for every code point, and written out as explicit ranges. The
tables are computed once per process (under half a second) and baked into the
graph as constants, so an exported model keeps them.

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
            "cjk", "case_ignorable", "cased_stop", "lower_fixups".

    Returns: sorted, merged `(first, last)` pairs.
    """
    if name == "lower_fixups":
        return _merge(_lower_fixups())
    if name not in _NAMES:
        raise ValueError(
            f"Unknown character test. Received: {name!r}. Allowed: "
            f"{sorted([*_NAMES, 'lower_fixups'])}"
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


# --- in-graph operations ------------------------------------------------------
# Strict UTF-8 (no surrogates, overlongs or code points past U+10FFFF): RE2
# compiles explicit ranges exactly, unlike its loose `.`.
_VALID_UTF8 = r"[\x00-\x{d7ff}\x{e000}-\x{10ffff}]*"


def drop_invalid_utf8(text):
    """Drops bytes that are not UTF-8, as the official `convert_to_unicode`.

    That is `bytes.decode("utf-8", "ignore")`; valid rows pass untouched, and
    the transcoding (slow) runs only for a batch that needs it.

    Args:
        text: string tensor.
    """
    import tensorflow as tf

    valid = tf.strings.regex_full_match(text, _VALID_UTF8)
    return tf.cond(
        tf.reduce_all(valid),
        lambda: text,
        lambda: tf.where(
            valid,
            text,
            tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore"),
        ),
    )


def member(code_points, name: str):
    """Whether each int32 code point is in the class `name` (binary search)."""
    import tensorflow as tf

    table = np.array(ranges(name), np.int32).reshape(-1, 2)
    starts, ends = tf.constant(table[:, 0]), tf.constant(table[:, 1])
    index = tf.searchsorted(starts, code_points, side="right") - 1
    inside = code_points <= tf.gather(ends, tf.maximum(index, 0))
    return tf.logical_and(index >= 0, inside)


def python_lower(text):
    """`str.lower()` of each string, in the graph.

    `tf.strings.lower` (ICU) agrees with Python except for NUL (it stops
    there), capital sigma (Python picks the final form by context) and a few
    characters newer than its tables; rows holding one of those go through
    an exact code-point path, the others through the fast op.

    Args:
        text: string tensor [batch] of valid UTF-8.
    """
    import tensorflow as tf

    special = tf.strings.regex_full_match(
        text, "(?s).*" + regex_class("lower_fixups") + ".*"
    )
    parts = tf.dynamic_partition(text, tf.cast(special, tf.int32), 2)
    where = tf.dynamic_partition(tf.range(tf.size(text)), tf.cast(special, tf.int32), 2)
    plain = tf.strings.lower(parts[0], encoding="utf-8")
    return tf.dynamic_stitch(where, [plain, _exact_lower(parts[1])])


def _exact_lower(text):
    import tensorflow as tf

    chars = tf.strings.unicode_decode(text, "UTF-8")
    flat = chars.flat_values
    rows = chars.value_rowids()
    first = tf.gather(chars.row_starts(), rows)
    limit = tf.gather(chars.row_limits(), rows)
    size = tf.size(flat, out_type=tf.int64)
    # Final sigma: walk back and forth over case-ignorable characters to the
    # nearest others ("stops"); final when the one before is cased and the
    # one after is not (or the row ends).
    stop = tf.logical_not(member(flat, "case_ignorable"))
    stop_at = tf.concat([[-1], tf.boolean_mask(tf.range(size), stop), [size]], axis=0)
    stops = tf.cast(stop, tf.int64)
    before = tf.gather(stop_at, tf.cumsum(stops, exclusive=True))
    after = tf.gather(stop_at, tf.cumsum(stops) + 1)
    cased = member(flat, "cased_stop")
    last = tf.maximum(size - 1, 0)

    def cased_at(position):
        return tf.gather(cased, tf.clip_by_value(position, 0, last))

    cased_before = tf.logical_and(before >= first, cased_at(before))
    cased_after = tf.logical_and(after < limit, cased_at(after))
    final = tf.logical_and(
        flat == SIGMA, tf.logical_and(cased_before, tf.logical_not(cased_after))
    )
    keys, values = lowercase_map()
    index = tf.minimum(tf.searchsorted(keys, flat), len(keys) - 1)
    lowered = tf.where(tf.gather(keys, index) == flat, tf.gather(values, index), flat)
    lowered = tf.where(final, FINAL_SIGMA, lowered)
    return tf.strings.unicode_encode(chars.with_flat_values(lowered), "UTF-8")
