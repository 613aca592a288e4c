"""The help formatter every `albert-keras` subcommand shares."""

from __future__ import annotations

import argparse
import math


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Shows each flag's default after its help, except where there is none.

    A default of None or False (a flag that is off, a value that is computed)
    is left out, True reads "on", and a help text that already says its
    default (`%(default)s` or "(default: ...)") is kept as it is.

    Example:

    >>> import argparse
    >>> parser = argparse.ArgumentParser(formatter_class=DefaultsHelpFormatter)
    >>> _ = parser.add_argument("--epochs", type=int, default=3, help="passes")
    >>> "passes (default: 3)" in parser.format_help()
    True
    """

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if default is None or default is False or default == argparse.SUPPRESS:
            return text
        if "%(default)" in text or "(default:" in text:
            return text
        if default is True:
            return text + " (default: on)"
        return text + " (default: %(default)s)"


def rate_or_auto(text: str) -> float | None:
    """An argparse type: a number >= 0 (0 freezes the weights), or "auto" (None).

    Args:
        text: the flag's value as typed.

    Raises:
        argparse.ArgumentTypeError: naming the value and what is accepted, so
            argparse prints it as it is.

    Example:

    >>> rate_or_auto("2e-4"), rate_or_auto("auto")
    (0.0002, None)
    """
    return _number_or_auto(
        text,
        lambda x: math.isfinite(x) and x >= 0,
        "a rate: give a number >= 0 (such as 2e-4)",
    )


def probability_or_auto(text: str) -> float | None:
    """An argparse type: a number strictly between 0 and 1, or "auto" (None).

    Example:

    >>> probability_or_auto("0.3"), probability_or_auto("auto")
    (0.3, None)
    """
    return _number_or_auto(
        text,
        lambda x: 0 < x < 1,
        "a threshold: give a probability between 0 and 1 (such as 0.5)",
    )


def threshold_choice(text: str) -> float | str | None:
    """An argparse type: a probability, "auto" (None) or "per-label" ("per_label").

    Example:

    >>> threshold_choice("0.3"), threshold_choice("auto"), threshold_choice("per-label")
    (0.3, None, 'per_label')
    """
    if text == "per-label":
        return "per_label"
    try:
        return probability_or_auto(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a threshold: give a probability between 0 and 1 "
            "(such as 0.5), auto (one, chosen on dev) or per-label (one per "
            "label, chosen on dev)"
        ) from None


def _number_or_auto(text, valid, what):
    """None for "auto", else `text` as a float that `valid` accepts; an
    `ArgumentTypeError` saying it is not `what` otherwise."""
    if text == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not valid(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} or auto")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1.

    Example:

    >>> positive_int("5")
    5
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value
