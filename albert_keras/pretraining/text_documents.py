"""`read_documents`: a pretraining text file -> documents of segments (and back).

The input format of the official `create_pretraining_data.py`: one segment
per line (ideally a sentence; the corpora in `shared/data/pretrain` and the
embedded one have a paragraph per line), a blank (or whitespace-only) line
between documents. `split_sentences` cuts paragraph lines into sentences so
segment pairs can also be cut inside a paragraph.
"""

from __future__ import annotations

import gzip
import json
import os
import re

from albert_keras.atomic_files import atomic_write
from albert_keras.tokenizers.binary_files import binary_kind, undecodable_line
from albert_keras.tokenizers.vocabulary import input_paths

_SENTENCE_END = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMs\.)(?<=[.!?])"
    r"[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])"
)
# Chinese: after 。！？ (a run of them) and the closing quotes or brackets that
# follow, whatever comes next (no space, no capitals in Chinese).
_CLOSERS = "”’」』）》〉"
_CJK_SENTENCE_END = re.compile(
    rf"(?<=[。！？])(?![。！？{_CLOSERS}])"
    rf"|(?<=[。！？][{_CLOSERS}])(?![{_CLOSERS}])"
    rf"|(?<=[。！？][{_CLOSERS}]{{2}})(?![{_CLOSERS}])"
)


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a paragraph: English cut after . ! ? before a capital or
    digit, Chinese after 。！？ and the closing quotes that follow.

    Example:
    >>> split_sentences("It was late. Mr. Knightley came in! Emma smiled.")
    ['It was late.', 'Mr. Knightley came in!', 'Emma smiled.']
    >>> split_sentences("天下大势，分久必合。帝曰：“何罪？”帝怒。")
    ['天下大势，分久必合。', '帝曰：“何罪？”', '帝怒。']
    """
    return [
        s.strip()
        for part in _SENTENCE_END.split(paragraph)
        for s in _CJK_SENTENCE_END.split(part)
        if s.strip()
    ]


def read_documents(path: str, sentences: bool = False) -> list[list[str]]:
    """Documents of a UTF-8 text file: non-empty lines, split at blank lines.

    Args:
        path: the file (`.gz` files are decompressed).
        sentences: split each line into sentences (`split_sentences`).

    Returns: list of documents, each a list of segments (stripped lines).

    Raises:
        ValueError: the file is missing, a folder, unreadable or not UTF-8;
            the message says which byte and line, and how to convert it.

    Example:
    >>> read_documents("corpus.txt")  # doctest: +SKIP
    [['First paragraph.', 'Second one.'], ['Next document.']]
    """
    if os.path.isdir(path):
        raise ValueError(
            f"{path!r} is a folder; pass the text files in it (e.g. '{path}/*.txt')."
        )
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise ValueError(f"Cannot read {path!r}: {e.strerror or e}.") from None
    kind = binary_kind(raw[:4096])
    if kind:
        raise ValueError(
            f"{path!r} is {kind}; pass UTF-8 text files (documents separated "
            "by blank lines)."
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = undecodable_line(path, raw, e)
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}, line {line}: "
            f"{raw[e.start : e.start + 4]!r}). Convert it first, e.g. "
            f"`iconv -f latin1 -t utf-8 {path} > converted.txt`."
        ) from None
    _refuse_json_lines(path, text)
    documents, current = [], []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            current.extend(split_sentences(line) if sentences else [line])
        elif current:
            documents.append(current)
            current = []
    if current:
        documents.append(current)
    return documents


def _refuse_json_lines(path: str, text: str) -> None:
    """A JSON Lines file (e.g. a task file) is refused, not read as prose."""
    found = re.search(r"\S[^\n]*", text)  # the first non-blank line, no copy
    first = found.group().strip() if found else ""
    if not (first.startswith("{") and first.endswith("}")):
        return
    try:
        record = json.loads(first)
    except ValueError:
        return
    if isinstance(record, dict):
        raise ValueError(
            f"{path!r} is JSON Lines (its first line is a JSON object with the "
            f"keys {', '.join(map(str, record))}), not text: write its texts out "
            "as plain lines (a segment per line, a blank line between documents)."
        )


def write_documents(path: str, documents: list[list[str]]) -> None:
    """Writes documents in the input format `read_documents` reads back.

    One segment per line, a blank line between documents.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "docs.txt")
    >>> write_documents(path, [["One.", "Two."], ["Three."]])
    >>> read_documents(path)
    [['One.', 'Two.'], ['Three.']]
    """
    with atomic_write(path) as f:
        f.write("\n\n".join("\n".join(doc) for doc in documents) + "\n")


def hold_out_documents(
    input_files, folder: str, every: int = 10, max_documents: int | None = None
):
    """Splits text files into training and held-out documents (whole documents).

    Every `every`-th document of each file is held out, so the held-out
    text shares no paragraph with the training text. The documents keep
    their lines; the two files are in the input format again.

    Args:
        input_files: paths or glob patterns of UTF-8 text files (`.gz` too).
        folder: where `train.txt` and `held_out.txt` are written.
        every: hold out documents `every - 1`, `2 * every - 1`, ... (>= 2).
        max_documents: use only the first this many documents of each file.

    Returns:
        `(train_path, held_out_path, counts)`, `counts` mapping each file's
        name (its path where two inputs share a name) to
        `{"documents": n, "held_out": k}`.

    Raises:
        ValueError: `every` below 2, unreadable files, or no document held
            out (fewer than `every` documents in every file).

    Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> docs = "\\n\\n".join(f"Paragraph {i}.\\nAnother." for i in range(4))
    >>> _ = (folder / "corpus.txt").write_text(docs)
    >>> train, held, counts = hold_out_documents([str(folder / "corpus.txt")],
    ...                                         str(folder / "split"), every=2)
    >>> counts["corpus.txt"], open(held).read().split("\\n")[0]
    ({'documents': 4, 'held_out': 2}, 'Paragraph 1.')
    """
    if not isinstance(every, int) or every < 2:
        raise ValueError(
            "Hold out every k-th document with k >= 2 (k=10 keeps 90% for "
            f"training). Received: every={every!r}"
        )
    train, held, counts = [], [], {}
    paths = input_paths(input_files)
    names = [os.path.basename(path) for path in paths]
    if len(set(names)) < len(names):  # same name in two folders: full paths
        names = paths
    for path, name in zip(paths, names, strict=True):
        documents = read_documents(path)[:max_documents]
        held_docs = documents[every - 1 :: every]
        train.extend(d for i, d in enumerate(documents) if i % every != every - 1)
        held.extend(held_docs)
        count = counts.setdefault(name, {"documents": 0, "held_out": 0})
        count["documents"] += len(documents)  # a file given twice adds up
        count["held_out"] += len(held_docs)
    if not held or not train:
        total = sum(c["documents"] for c in counts.values())
        raise ValueError(
            f"Holding out every {every}-th document leaves "
            f"{'no held-out' if not held else 'no training'} document: the input "
            f"has {total} document(s) (a blank line ends a document). Lower the "
            "held-out period or add documents."
        )
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, name) for name in ("train.txt", "held_out.txt")]
    write_documents(paths[0], train)
    write_documents(paths[1], held)
    return paths[0], paths[1], counts
