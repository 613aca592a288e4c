"""The official tokenizer's character tests, as RE2 classes and in-graph lookups.

The official `tokenization.py` decides with Python's `unicodedata` and `str`
methods: `str.split()` whitespace, `unicodedata.combining`, categories Cc, Cf,
Zs, Mn and P*, `str.lower()`. RE2's `\\p{..}` classes and ICU's case mapping
follow other Unicode versions and other definitions (`\\p{Mn}` is not
"combining class != 0": Devanagari vowel signs are Mn with class 0, which the
official code keeps), so every class here is computed from the running
Python, code point by code point, and written out as explicit ranges. The
tables are computed once per process (about a second) and baked into the
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


def _code_points():
    for block in _SCANNED:
        for cp in block:
            if not 0xD800 <= cp <= 0xDFFF:
                yield cp


def _is_punctuation(char: str) -> bool:
    # The official `_is_punctuation`: non-alphanumeric ASCII, or category P*.
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(cp: int) -> bool:
    # The official `BasicTokenizer._is_chinese_char`.
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _sigma_tests(char: str) -> tuple[bool, bool]:
    """(case-ignorable, cased and not case-ignorable), as Python's lower() sees them.

    Python lowercases "Σ" to "ς" when a cased letter precedes it and none
    follows it, skipping case-ignorable characters both ways. Python does not
    expose those two properties; asking `lower()` itself gets them right for
    this very Python.
    """
    cased_stop = (" " + char + "\u03a3").lower()[-1] == "\u03c2"
    skipped_or_cased = ("A" + char + "\u03a3").lower()[-1] == "\u03c2"
    return skipped_or_cased and not cased_stop, cased_stop


_PREDICATES = {
    # str.split() / str.strip() whitespace (preprocess_text's collapse).
    "whitespace": lambda c: c.isspace(),
    "other_whitespace": lambda c: c.isspace() and c != " ",
    # What preprocess_text drops after NFKD.
    "combining": lambda c: unicodedata.combining(c) != 0,
    # _clean_text: dropped characters (controls, formats, NUL, U+FFFD) ...
    "clean_drop": lambda c: (
        c not in "\t\n\r"
        and (ord(c) in (0, 0xFFFD) or unicodedata.category(c) in ("Cc", "Cf"))
    ),
    # ... and characters that become a space; then whitespace_tokenize splits
    # on str.split() whitespace, of which U+2028 and U+2029 are still left.
    "clean_space": lambda c: (
        c != " "
        and (
            c in "\t\n\r"
            or unicodedata.category(c) == "Zs"
            or (c.isspace() and unicodedata.category(c) not in ("Cc", "Cf"))
        )
    ),
    # _run_strip_accents after NFD.
    "nonspacing_mark": lambda c: unicodedata.category(c) == "Mn",
    "punctuation": _is_punctuation,
    "cjk": lambda c: _is_cjk(ord(c)),
    "case_ignorable": lambda c: _sigma_tests(c)[0],
    "cased_stop": lambda c: _sigma_tests(c)[1],
}


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
    if name not in _PREDICATES:
        raise ValueError(
            f"Unknown character test. Received: {name!r}. Allowed: "
            f"{sorted([*_PREDICATES, 'lower_fixups'])}"
        )
    test = _PREDICATES[name]
    return _merge(cp for cp in _code_points() if test(chr(cp)))


def _merge(code_points) -> tuple[tuple[int, int], ...]:
    merged = []
    for cp in sorted(code_points):
        if merged and cp == merged[-1][1] + 1:
            merged[-1][1] = cp
        else:
            merged.append([cp, cp])
    return tuple((a, b) for a, b in merged)


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
    keys, values = [], []
    for cp in _code_points():
        lower = chr(cp).lower()
        if lower != chr(cp):
            if len(lower) > 1 and cp != 0x130:
                raise AssertionError(f"unexpected multi-character lower of {cp:x}")
            keys.append(cp)
            values.append(ord(lower[0]))
    return np.array(keys, np.int32), np.array(values, np.int32)


@functools.cache
def _lower_fixups() -> tuple[int, ...]:
    """Characters `tf.strings.lower(encoding="utf-8")` gets wrong for Python.

    NUL (the op stops there), capital sigma (context), and characters ICU's
    older case tables do not know, found by running the op on every code point.
    """
    import tensorflow as tf

    points = list(_code_points())
    chars = [chr(cp).encode("utf-8") for cp in points]
    with tf.init_scope():  # eager, even when first asked inside a tf.function
        lowered = tf.strings.lower(tf.constant(chars), encoding="utf-8").numpy()
    wrong = {
        cp
        for cp, char, got in zip(points, chars, lowered, strict=True)
        if got.decode("utf-8") != char.decode("utf-8").lower()
    }
    return tuple(sorted(wrong | {0, SIGMA}))


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
