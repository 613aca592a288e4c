"""The character tables, computed in one vectorized pass, against the official
code's tests asked one character at a time (the definitions below)."""

import unicodedata

import numpy as np
import pytest

from albert_keras.tokenizers import unicode_tables
from albert_keras.tokenizers.unicode_tables import lowercase_map, ranges


def _final_sigma(text):
    return text.lower()[-1] == "\u03c2"


# BasicTokenizer._is_chinese_char's blocks.
CJK_BLOCKS = [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
]  # fmt: skip
# Each test as the official tokenization.py (and CPython's lower()) decide it.
REFERENCE = {
    "whitespace": lambda c: c.isspace(),
    "other_whitespace": lambda c: c.isspace() and c != " ",
    "combining": lambda c: unicodedata.combining(c) != 0,
    "clean_drop": lambda c: (
        c not in "\t\n\r"
        and (ord(c) in (0, 0xFFFD) or unicodedata.category(c) in ("Cc", "Cf"))
    ),
    "clean_space": lambda c: (
        c != " "
        and (
            c in "\t\n\r"
            or unicodedata.category(c) == "Zs"
            or (c.isspace() and unicodedata.category(c) not in ("Cc", "Cf"))
        )
    ),
    "nonspacing_mark": lambda c: unicodedata.category(c) == "Mn",
    "punctuation": lambda c: (
        (33 <= ord(c) <= 47 or 58 <= ord(c) <= 64 or 91 <= ord(c) <= 96)
        or 123 <= ord(c) <= 126
        or unicodedata.category(c).startswith("P")
    ),
    "cjk": lambda c: any(a <= ord(c) <= b for a, b in CJK_BLOCKS),
    "case_ignorable": lambda c: (
        _final_sigma("A" + c + "\u03a3") and not _final_sigma(" " + c + "\u03a3")
    ),
    "cased_stop": lambda c: _final_sigma(" " + c + "\u03a3"),
}
# Every 5th code point of the scanned ones, and every one of the blocks where
# the tests are dense (Latin, Greek, combining marks, punctuation, CJK edges).
SAMPLE = sorted(
    (
        {*range(0, 0x40000, 5), *range(0xE0000, 0xE1000, 5), *range(0x0, 0x800)}
        | {*range(0x1DC0, 0x2070), *range(0x3000, 0x3040), *range(0xFE00, 0xFF70)}
    )
    - {*range(0xD800, 0xE000)}
)


def _members(name):
    inside = set()
    for first, last in ranges(name):
        inside.update(range(first, last + 1))
    return inside


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_ranges_equal_the_per_character_tests(name):
    inside = _members(name)
    test = REFERENCE[name]
    wrong = [hex(cp) for cp in SAMPLE if (cp in inside) != test(chr(cp))]
    assert not wrong, wrong[:20]
    assert inside, name  # every test has members


def test_ranges_are_sorted_and_merged():
    for name in REFERENCE:
        pairs = np.array(ranges(name))
        assert (pairs[:, 0] <= pairs[:, 1]).all()
        assert (pairs[1:, 0] > pairs[:-1, 1] + 1).all(), name  # none touch


def test_lowercase_map_is_str_lower():
    keys, values = lowercase_map()
    table = dict(zip(keys.tolist(), values.tolist(), strict=True))
    for cp in SAMPLE:
        lower = chr(cp).lower()
        expected = ord(lower[0]) if lower != chr(cp) else None
        assert table.get(cp) == expected, hex(cp)


def test_lower_fixups_hold_nul_and_sigma_and_are_what_tf_gets_wrong():
    import tensorflow as tf

    fixups = _members("lower_fixups")
    assert {0, unicode_tables.SIGMA} <= fixups
    others = sorted(fixups - {0, unicode_tables.SIGMA})
    chars = [chr(cp) for cp in others]
    got = tf.strings.lower([c.encode() for c in chars], encoding="utf-8").numpy()
    assert all(g.decode() != c.lower() for g, c in zip(got, chars, strict=True))
    plain = [chr(cp) for cp in SAMPLE[::7] if cp not in fixups]
    got = tf.strings.lower([c.encode() for c in plain], encoding="utf-8").numpy()
    assert [g.decode() for g in got] == [c.lower() for c in plain]


def test_unknown_name_names_the_allowed_ones():
    with pytest.raises(ValueError, match="Unknown character test.*'whitespace'"):
        ranges("spaces")


@pytest.mark.parametrize("form", ["NFKD", "NFD"])
def test_python_normalize_is_unicodedata(form):
    """tf-text's ICU knows a newer Unicode; the fixups make it Python's."""
    import tensorflow as tf

    from albert_keras.tokenizers.unicode_ops import python_normalize

    fixups = sorted(_members(f"{form.lower()}_fixups"))
    # The piecewise path is exact while each fixup is a starter to Python.
    assert all(unicodedata.combining(chr(cp)) == 0 for cp in fixups)
    chars = [chr(cp) for cp in SAMPLE[::3] + fixups]
    texts = [
        *chars,
        *[
            f"\x00{a}\u0301{b}\u0334{a}"
            for a, b in zip(chars, chars[::-1], strict=True)
        ],
        "",
    ]
    got = python_normalize(tf.constant([t.encode() for t in texts]), form).numpy()
    wrong = [
        ascii(t)
        for g, t in zip(got, texts, strict=True)
        if g.decode() != unicodedata.normalize(form, t)
    ]
    assert not wrong, wrong[:10]
