"""What a file that should be text is instead, from its first bytes.

Text readers (corpora, task files, vocabulary input) refused a model, an
archive or a UTF-16 file as "not UTF-8 text", suggesting a conversion that
cannot help; `binary_kind` names what the bytes are, so the message can say
which file to pass instead.
"""

from __future__ import annotations

_MAGIC = (
    (b"PK\x03\x04", "a zip archive (a .keras model, .zip or office document)"),
    (b"\x1f\x8b", "gzip-compressed (a release .tar.gz?)"),
    (b"\x89HDF", "an HDF5 file (model weights?)"),
    (b"%PDF", "a PDF document"),
    (b"\xff\xfe", "UTF-16 text (convert it: iconv -f utf-16 -t utf-8)"),
    (b"\xfe\xff", "UTF-16 text (convert it: iconv -f utf-16 -t utf-8)"),
)


def binary_kind(head: bytes) -> str | None:
    """What the file starting with `head` is, when it is not plain text.

    Args:
        head: the first bytes of the file (a few KB).

    Returns:
        A short description ("a zip archive (...)"), or None for bytes that
        may be text.

    Example:
    >>> binary_kind(b"PK\\x03\\x04 ...")
    'a zip archive (a .keras model, .zip or office document)'
    >>> binary_kind("Emma Woodhouse".encode()) is None
    True
    """
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if b"\x00" in head[:4096]:
        return "a binary or UTF-16 file (it holds NUL bytes)"
    return None


def read_head(path, size: int = 4096) -> bytes:
    """The first `size` bytes of `path` (b"" where it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def undecodable_line(path, raw: bytes, error: UnicodeDecodeError) -> int:
    """The line of `raw` where `error` (a failed UTF-8 decode) stands; refuses
    UTF-8 text cut inside a character (`head -c` of Chinese text).

    Such a file is UTF-8, so the "convert it with iconv" fix of other
    undecodable bytes would turn it into mojibake; this names the real fix.
    Callers put the line in their own "not UTF-8" message.
    """
    line = raw[: error.start].count(b"\n") + 1
    if error.reason == "unexpected end of data":
        raise ValueError(
            f"{str(path)!r} ends in the middle of a UTF-8 character (byte "
            f"{error.start}, line {line}): it was cut short (head -c?). Cut "
            "whole lines instead, e.g. `head -n 1000`."
        ) from None
    return line
