"""Rewrite tests/data from the project's larger shared corpora (not run by tests).

    python tests/data/make_fixtures.py [--shared-dir DATA]  (else $ALBERT_KERAS_DATA)

Every slice is deterministic (the first records or documents of a file), so the
same shared data always gives the same fixtures. See tests/data/README.md for
what each file holds and where it comes from.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# pretrain/<file>: (documents, paragraphs kept per document; None = all).
# Only public-domain or freely redistributable text: en_austen.txt is not
# copied (the package embeds all of it, albert_keras/data/en_austen.txt.gz),
# and the shared en_news.txt (articles scraped from news sites) and
# zh_peoples_daily_199801.txt (research use) are left out.
PRETRAIN = {
    "en_brown.txt": (48, 10),
    "zh_sanguo.txt": (8, None),
}

# tasks/<name>/<split>.jsonl: records kept, in file order, with each label's
# share of the whole file.
JSONL_TASKS = {
    "rt_sentiment": {"train": 300, "dev": 150},
    "zh_sentiment": {"train": 120, "dev": 70},
    "vitaminc": {"train": 100, "dev": 120},
    "social_iqa": {"train": 120, "dev": 70},
}

# tasks/disfl_qa/<split>.json: the first paragraphs (contexts, with all
# their questions) of SQuAD 2.0 JSON.
SQUAD_PARAGRAPHS = {"train": 42, "dev": 20}


def documents(path):
    """Documents of a pretraining text: lists of lines, split at blank lines."""
    found, current = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip():
                current.append(line)
            elif current:
                found.append(current)
                current = []
    if current:
        found.append(current)
    return found


def write_pretrain(shared, out):
    for name, (count, paragraphs) in PRETRAIN.items():
        kept = [doc[:paragraphs] for doc in documents(os.path.join(shared, name))]
        text = "\n\n".join("\n".join(doc) for doc in kept[:count]) + "\n"
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)


def balanced_first(lines, count):
    """The first records of each label, `count` in all, in file order.

    Each label keeps its share of the whole file (rounded); task files are
    sometimes sorted by label, so the plain first N could be one class.
    """
    labels = [json.dumps(json.loads(line).get("label")) for line in lines]
    total = Counter(labels)
    quota = {k: round(count * n / len(lines)) for k, n in total.items()}
    # Rounding may leave the sum a record off: the largest class absorbs it.
    quota[total.most_common(1)[0][0]] += count - sum(quota.values())
    taken, kept = Counter(), []
    for line, label in zip(lines, labels, strict=True):
        if taken[label] < quota[label]:
            taken[label] += 1
            kept.append(line)
    return kept


def write_jsonl_tasks(shared, out):
    for name, splits in JSONL_TASKS.items():
        os.makedirs(os.path.join(out, name), exist_ok=True)
        for split, count in splits.items():
            source = os.path.join(shared, name, f"{split}.jsonl")
            with open(source, encoding="utf-8") as f:
                lines = [line for line in f if line.strip()]
            with open(
                os.path.join(out, name, f"{split}.jsonl"), "w", encoding="utf-8"
            ) as f:
                f.writelines(balanced_first(lines, count))


def write_squad(shared, out):
    os.makedirs(os.path.join(out, "disfl_qa"), exist_ok=True)
    for split, count in SQUAD_PARAGRAPHS.items():
        with open(
            os.path.join(shared, "disfl_qa", f"{split}.json"), encoding="utf-8"
        ) as f:
            data = json.load(f)
        article = data["data"][0]  # one article holds every paragraph
        sliced = dict(
            data, data=[dict(article, paragraphs=article["paragraphs"][:count])]
        )
        with open(
            os.path.join(out, "disfl_qa", f"{split}.json"), "w", encoding="utf-8"
        ) as f:
            json.dump(sliced, f, ensure_ascii=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--shared-dir",
        default=os.environ.get("ALBERT_KERAS_DATA")
        or os.path.join(REPO, "..", "shared", "data"),
        help="the shared data folder (pretrain/ and tasks/); default: "
        "$ALBERT_KERAS_DATA, else ../shared/data beside the repository (as the "
        "benchmarks)",
    )
    args = parser.parse_args()
    for part in ("pretrain", "tasks"):
        if not os.path.isdir(os.path.join(args.shared_dir, part)):
            parser.error(
                f"{args.shared_dir!r} has no {part}/ folder: pass --shared-dir "
                "(or set ALBERT_KERAS_DATA) to the shared data folder. The tests "
                "need none of it: they use the fixtures already in tests/data."
            )
    os.makedirs(os.path.join(HERE, "pretrain"), exist_ok=True)
    write_pretrain(
        os.path.join(args.shared_dir, "pretrain"), os.path.join(HERE, "pretrain")
    )
    write_jsonl_tasks(
        os.path.join(args.shared_dir, "tasks"), os.path.join(HERE, "tasks")
    )
    write_squad(os.path.join(args.shared_dir, "tasks"), os.path.join(HERE, "tasks"))
    for folder, _, files in sorted(os.walk(HERE)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            print(
                f"{os.path.getsize(path) / 1024:7.1f} KB  {os.path.relpath(path, HERE)}"
            )


if __name__ == "__main__":
    main()
