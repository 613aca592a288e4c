"""The training labels of a classification task: what looks like a mistake.

Mixed kinds (`1` and `"1"`), a stray rare label beside a common class, a
rare label spelt almost like a common one, and labels spelt the same but for
case or spaces are refused with their line numbers and the fix.
"""

from __future__ import annotations

import difflib
import re

# A class this rare beside one this common is taken for a typo (`7` in a 0/1
# file): declare the label set (`labels`, --labels) to train on it anyway.
RARE_CLASS = 3
COMMON_CLASS = 300
# In a file of any size, a rare label that is a near-miss of one this many
# times as common is taken for a typo (`postive` beside `pos`, `Neg` beside
# `neg`; `is_near_miss`).
NEAR_MISS_FACTOR = 5


_KIND_NAMES = {"str": "strings", "int": "numbers", "bool": "booleans"}


def check_label_lines(lines: dict, rare_classes=True) -> None:
    """Refuses mixed label types (`1` and `"1"`) and stray rare labels.

    A label seen at most `RARE_CLASS` times is refused as a typo when it is a
    near-miss of a label `NEAR_MISS_FACTOR` times as common (any file), or
    when another class has `COMMON_CLASS` examples (`7` in a 0/1 file).

    Args:
        lines: {(type name, label): [line numbers]} of the training file.
        rare_classes: refuse rare labels beside a common one; False where a
            long tail of rare labels is normal (multi-label sets), which
            still refuses near-misses and case variants.

    Example:
    >>> check_label_lines({("int", 1): [1], ("str", "1"): [2]})
    Traceback (most recent call last):
    ...
    ValueError: The training labels mix numbers and strings ...
    """
    kinds = {kind for kind, _ in lines}
    if len(kinds) > 1:
        shown = {
            kind: sorted(n for (k, _), ns in lines.items() if k == kind for n in ns)
            for kind in kinds
        }
        ordered = sorted(shown.items(), key=lambda kv: len(kv[1]))
        where = "; ".join(
            f"{_KIND_NAMES[kind]} on line(s) "
            f"{', '.join(map(str, numbers[:5]))}{' ...' if len(numbers) > 5 else ''}"
            for kind, numbers in ordered
        )
        rarer = ordered[0][0]
        values = ", ".join(repr(v) for k, v in sorted(lines) if k == rarer)
        mixed = " and ".join(sorted(map(_KIND_NAMES.get, kinds)))
        raise ValueError(
            f"The training labels mix {mixed} ({where}; the "
            f'{_KIND_NAMES[rarer]}: {values[:80]}): `1` and `"1"` (or `true`) '
            "would become two classes. "
            "Write every label one way, or declare the label set with --labels "
            "(labels=[...] in Python): rows with other labels are then skipped "
            "and reported."
        )
    counts = {label: ns for (_, label), ns in lines.items()}
    _check_near_misses(counts)
    _check_case_variants(counts)
    most = max((len(ns) for ns in counts.values()), default=0)
    rare = {label: ns for label, ns in counts.items() if len(ns) <= RARE_CLASS}
    if rare and most >= COMMON_CLASS and rare_classes:
        where = "; ".join(
            f"{label!r} on line(s) {', '.join(map(str, ns))}"
            for label, ns in rare.items()
        )
        raise ValueError(
            f"Label(s) seen at most {RARE_CLASS} times beside a class seen "
            f"{most} times: {where}. A typo? Fix those lines, or declare the "
            "label set (--labels / labels=[...]) to keep them as classes."
        )


def _check_near_misses(counts):
    """Refuses rare labels spelt almost like a much more common one."""
    found = []
    for rare, rare_lines in counts.items():
        if len(rare_lines) > RARE_CLASS:
            continue
        common = [
            label
            for label, ns in counts.items()
            if len(ns) >= NEAR_MISS_FACTOR * len(rare_lines)
            and is_near_miss(rare, label)
        ]
        if common:
            found.append((rare, max(common, key=lambda c: len(counts[c]))))
    if not found:
        return
    typos = {rare for rare, _ in found}
    kept = sorted(label for label in counts if label not in typos)
    pairs = "; ".join(
        f"{rare!r} ({_seen(counts[rare])}) looks like a typo of {label!r} "
        f"({_seen(counts[label])})"
        for rare, label in found
    )
    raise ValueError(
        f"Rare training label(s) spelt like a common one: {pairs}. Fix those "
        f"lines, or declare the label set with --labels {','.join(map(str, kept))} "
        f"(labels={kept!r} in Python): rows with other labels are then skipped "
        "and reported. To keep a rare label as a class, list it there too."
    )


def _seen(lines):
    shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
    times = "1 time" if len(lines) == 1 else f"{len(lines)} times"
    return f"{times}, line{'s' if len(lines) > 1 else ''} {shown}"


def _check_case_variants(counts):
    """Refuses string labels that differ only in case or spaces, however
    common each is (`Positive` and `positive`: two classes, one meaning)."""
    groups = {}
    for label in counts:
        if isinstance(label, str):
            groups.setdefault(" ".join(label.casefold().split()), []).append(label)
    variants = [sorted(group) for group in groups.values() if len(group) > 1]
    if not variants:
        return
    named = "; ".join(
        " and ".join(f"{label!r} ({_seen(counts[label])})" for label in group)
        for group in variants
    )
    raise ValueError(
        f"Training labels spelt the same but for case or spaces: {named}. "
        "Each spelling would be a class of its own. Write each label one way "
        "in the file, or declare the label set with --labels (labels=[...] in "
        "Python): rows with other labels are then skipped and reported."
    )


# Labels the same up to case and spaces, one letter off, one a longer
# spelling of the other, or with a `difflib` ratio this high are near-misses.
NEAR_MISS_RATIO = 0.8


def is_near_miss(rare, common) -> bool:
    """Whether the string label `rare` reads as a misspelling of `common`.

    Args:
        rare, common: two labels; numbers are never near-misses (0..9 are
            ten classes, however rare one is).

    Example:
    >>> is_near_miss("postive", "pos"), is_near_miss("Neg ", "neg")
    (True, True)
    >>> is_near_miss("contradiction", "neutral")
    False
    """
    if not (isinstance(rare, str) and isinstance(common, str)) or rare == common:
        return False
    a, b = (
        " ".join(re.split(r"[\s_\-/]+", x.strip().casefold())) for x in (rare, common)
    )
    if a == b:
        return True  # case, spaces, `_` / `-` / `/`
    if not re.search(r"[^\W\d_]", a):
        return False  # digits and signs: names, not words
    if re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return False  # `class1` / `class10`, `level 2` / `level 3`: numbered
    short, long = sorted((a, b), key=len)
    if len(short) >= 3 and (long.startswith(short) or _one_edit(short, long)):
        return True  # `postive` or `nge` beside `pos` / `neg`
    return difflib.SequenceMatcher(None, a, b).ratio() >= NEAR_MISS_RATIO


def _one_edit(short, long):
    """One letter added, dropped, changed, or two neighbours swapped."""
    if len(long) - len(short) > 1:
        return False
    i = next(
        (i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y),
        len(short),
    )
    if len(short) < len(long):
        return short[i:] == long[i + 1 :]
    swapped = long[i + 1 : i + 2] + long[i : i + 1] + long[i + 2 :]
    return short[i + 1 :] == long[i + 1 :] or short[i:] == swapped
