"""Fixtures of the converter tests: the official code's checkpoints and outputs."""

from converter_oracle import official, pytest_terminal_summary  # noqa: F401
