"""Write the multi-label fixture tests/data/tasks/foldoc_topics (not run by tests).

    apt-get download dict-foldoc && dpkg-deb -x dict-foldoc_*.deb root/
    python tests/data/make_multilabel_fixture.py \
        --dict root/usr/share/dictd/foldoc.dict.dz [--out-dir DIR]

Reads FOLDOC (the Free On-line Dictionary of Computing, editor Denis Howe,
GNU FDL 1.1 or later) as Debian's dictd package ships it: one entry per
unindented headword line, its body indented, each meaning opening with the
editor's subject labels, e.g. ``<hardware, protocol>``. Each kept entry
becomes ``{"term", "text", "topics"}``:

- ``text``: the headword, a colon, then the body with the ``<...>`` labels,
  ``[...]`` references and the closing ``(date)`` line removed, ``{...}``
  cross-reference braces dropped and whitespace collapsed, cut to
  `MAX_CHARS` at a word.
- ``topics``: the entry's labels among `TOPICS` (its other labels are
  dropped), as a sorted list; ``[]`` where it has none of them.

Entries with a label among `TOPICS` are kept, and one in `NONE_EVERY` of the
labelled entries with none of them (the empty set). The split is fixed by a
hash of the headword (one in four to dev), and so is the draw: the
`SPLITS` entries of each split with the lowest hashes, written in dictionary
order.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
TOPICS = (
    "communications",
    "hardware",
    "language",
    "networking",
    "operating system",
    "programming",
    "protocol",
    "standard",
    "storage",
    "tool",
)
SPLITS = (("train", 400), ("dev", 120))
MAX_CHARS = 320
NONE_EVERY = 12
_LABELS = re.compile(r"^ +(?:\d+\. *)?<([a-z][a-z ,/-]*)>", re.M)


def entries(path):
    """(headword, body) of each dictionary entry, in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        raw = f.read()
    for entry in re.split(r"\n(?=\S)", raw):
        head, _, body = entry.partition("\n")
        if body.strip():
            yield head.strip(), body


def labels_of(body):
    return sorted({x.strip() for g in _LABELS.findall(body) for x in g.split(",")})


def clean(head, body):
    body = re.sub(r"<[^>\n]*>", " ", body)
    body = re.sub(r"\[[^\]]*\]", " ", body)
    body = re.sub(r"\(\d{4}-\d\d-\d\d\)", " ", body)
    body = body.replace("{", "").replace("}", "")
    text = " ".join(f"{head}: {body}".split())
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS].rsplit(" ", 1)[0]
    return text


def digest(head):
    return hashlib.sha1(head.encode()).digest()


def split_of(head):
    return "dev" if digest(head)[0] % 4 == 0 else "train"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dict", required=True, help="foldoc.dict.dz")
    parser.add_argument(
        "--out-dir", default=os.path.join(HERE, "tasks", "foldoc_topics")
    )
    args = parser.parse_args()
    rows = {name: [] for name, _ in SPLITS}
    unlabelled = 0
    for head, body in entries(args.dict):
        labels = labels_of(body)
        if not labels:
            continue
        topics = [t for t in labels if t in TOPICS]
        if not topics:
            unlabelled += 1
            if unlabelled % NONE_EVERY:
                continue
        rows[split_of(head)].append(
            {"term": head, "text": clean(head, body), "topics": topics}
        )
    os.makedirs(args.out_dir, exist_ok=True)
    for name, count in SPLITS:
        path = os.path.join(args.out_dir, f"{name}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            drawn = sorted(rows[name], key=lambda r: digest(r["term"])[1:])[:count]
            for row in sorted(drawn, key=rows[name].index):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(path, len(drawn))


if __name__ == "__main__":
    main()
