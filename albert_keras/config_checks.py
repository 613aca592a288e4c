"""Small checks and message helpers of `AlbertConfig` (kept apart to keep it short)."""

from __future__ import annotations

import difflib
import numbers
import os

# How close an unknown key must be to a field to be taken for its typo. 0.85
# and at most 2 characters longer or shorter: no key of the official,
# TF-Hub, transformers or Model Garden configs comes that close (the nearest,
# BERT's `pooler_num_attention_heads`, is 0.84 from `num_attention_heads`).
_NEAR_MISS_CUTOFF = 0.85
_NEAR_MISS_LENGTH = 2


def near_miss(key: str, names: set[str]) -> str | None:
    """The field `key` is a typo of, or None (an exact field or a foreign key)."""
    if key in names or key == "extra":
        return None
    for match in difflib.get_close_matches(
        key.lower(), sorted(names), n=3, cutoff=_NEAR_MISS_CUTOFF
    ):
        if abs(len(match) - len(key)) <= _NEAR_MISS_LENGTH:
            return match
    return None


def is_number(value) -> bool:
    """An int or float that is not a bool (`True` is an int in Python)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_positive_int(value) -> bool:
    """Python's or NumPy's integers of at least 1; not a bool.

    Example:
    >>> is_positive_int(3), is_positive_int(True), is_positive_int(0)
    (True, False, False)
    """
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and value >= 1
    )


def ticked(names) -> str:
    return ", ".join(f"`{name}`" for name in names)


def gb(size: float) -> str:
    return f"{size / 1e9:,.1f} GB ({size:.3g} bytes)"


def closest_preset(name, names: list[str]) -> str | None:
    """The preset name `name` is a typo of, or None.

    Example:
    >>> closest_preset("bse", ["base", "large"])
    'base'
    """
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.75)
    return close[0] if close else None


def unknown_preset(name, names: list[str]) -> str:
    """The refusal of the preset `name`: a near miss named, a path sent to
    what loads paths, else the names there are.

    Example:
    >>> unknown_preset("albert_bse_v2", ["albert_base_v2", "base"])
    "Unknown preset. Received: 'albert_bse_v2'. Did you mean 'albert_base_v2'?"
    """
    told = f"Unknown preset. Received: {name!r}."
    if isinstance(name, (str, os.PathLike)) and (
        os.path.exists(name) or os.sep in os.fspath(name)
    ):
        return (
            f"{told} A preset is a name ({', '.join(names)}). For the config of "
            "a folder or file: AlbertBackbone.from_preset(path).config, or "
            "AlbertConfig.from_json_file(path_to_albert_config_json)."
        )
    close = closest_preset(name, names)
    if close:
        return f"{told} Did you mean {close!r}?"
    return f"{told} Allowed: {', '.join(names)}"


def check_accumulation_steps(steps) -> int:
    """`steps` as an int of 1 or more, or a ValueError that says what to pass.

    >>> check_accumulation_steps(4)
    4
    """
    if not is_positive_int(steps):
        raise ValueError(
            "`gradient_accumulation_steps` (--gradient-accumulation-steps) is "
            "how many batches are averaged into one update: give a whole number, "
            f"1 (no accumulation) or more. Received: {steps!r}"
        )
    return int(steps)
