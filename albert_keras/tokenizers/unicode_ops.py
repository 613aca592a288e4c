"""The official tokenizer's character tests as in-graph operations.

`unicode_tables` holds the tables (from the running Python's `unicodedata`
and `str` methods); these ops apply them to string tensors: dropping bytes
that are not UTF-8, membership of code points, Python's `str.lower()` and
`unicodedata.normalize` where TensorFlow's and tf-text's ICU ops differ.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from albert_keras.tokenizers.unicode_tables import (
    FINAL_SIGMA,
    SIGMA,
    lowercase_map,
    ranges,
    regex_class,
)

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

    return _by_rows(
        text,
        "lower_fixups",
        lambda plain: tf.strings.lower(plain, encoding="utf-8"),
        _exact_lower,
    )


def python_normalize(text, form: str):
    """`unicodedata.normalize(form, ...)` ("NFD", "NFKD") of each string, in the graph.

    tf-text's `normalize_utf8` agrees with Python but for characters of a
    newer Unicode than Python's (`nfd_fixups`, `nfkd_fixups`); rows holding
    one are cut there: the runs between go through the op, each such
    character becomes Python's normalization of it alone. Exact as those
    characters are starters (class 0) to Python: all are unassigned in it.

    Args:
        text: string tensor [batch] of valid UTF-8.
        form: "NFD" or "NFKD".
    """
    import tensorflow_text as tf_text

    name = f"{form.lower()}_fixups"
    if not ranges(name):
        return tf_text.normalize_utf8(text, form)
    return _by_rows(
        text,
        name,
        lambda plain: tf_text.normalize_utf8(plain, form),
        lambda special: _exact_normalize(special, form, name),
    )


def _by_rows(text, fixups: str, fast, exact):
    """`fast` on the rows without a character of `fixups`, `exact` on the others.

    A batch without such rows (most) skips the exact path: eager calls on
    one text would spend most of their time in its many small ops.
    """
    import tensorflow as tf

    special = tf.strings.regex_full_match(text, f"(?s).*{regex_class(fixups)}.*")

    def mixed():
        parts = tf.dynamic_partition(text, tf.cast(special, tf.int32), 2)
        rows = tf.range(tf.size(text))
        where = tf.dynamic_partition(rows, tf.cast(special, tf.int32), 2)
        return tf.dynamic_stitch(where, [fast(parts[0]), exact(parts[1])])

    return tf.cond(tf.reduce_any(special), mixed, lambda: fast(text))


def _exact_normalize(text, form: str, fixups: str):
    import tensorflow as tf
    import tensorflow_text as tf_text

    chars = tf.strings.unicode_decode(text, "UTF-8")
    flat, rows = chars.flat_values, chars.value_rowids()
    position = tf.range(tf.size(flat, out_type=tf.int64))
    alone = member(flat, fixups)
    # A piece starts at each row's start, at a fixup and just after one.
    starts = tf.logical_or(
        tf.logical_or(position == tf.gather(chars.row_starts(), rows), alone),
        tf.gather(alone, tf.maximum(position - 1, 0)),
    )
    pieces = tf.strings.unicode_encode(
        tf.RaggedTensor.from_value_rowids(
            flat, tf.cumsum(tf.cast(starts, tf.int64)) - 1
        ),
        "UTF-8",
    )
    points = [cp for a, b in ranges(fixups) for cp in range(a, b + 1)]
    keys = tf.constant(np.array(points, np.int32))
    values = tf.constant([unicodedata.normalize(form, chr(cp)) for cp in points])
    first = tf.boolean_mask(flat, starts)
    index = tf.minimum(tf.searchsorted(keys, first), len(points) - 1)
    pieces = tf.where(
        tf.boolean_mask(alone, starts),
        tf.gather(values, index),
        tf_text.normalize_utf8(pieces, form),
    )
    rows = tf.RaggedTensor.from_value_rowids(
        pieces, tf.boolean_mask(rows, starts), nrows=tf.size(text, out_type=tf.int64)
    )
    return tf.strings.reduce_join(rows, axis=1)


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
