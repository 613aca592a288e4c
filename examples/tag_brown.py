"""Tagging: a tag per word (Brown sentences: POS tags, or BIO name/title chunks).

    python examples/tag_brown.py [--tags tags] [--init runs/pretrain/pretrainer.keras]

`TokenClassificationTask` tokenizes each word and tags it on its first
piece; `AlbertTokenClassifier` gives every piece a score per tag. Chunk tags
(B-NAME, I-NAME, ...) are scored by entity F1 (the conlleval rules), other
tags by word accuracy. `task.fit` trains it and exports a SavedModel that
takes sentences and returns their words and tags.
"""

import argparse
import os

import tensorflow as tf

from albert_keras.tasks import TokenClassificationTask

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data",
    default=os.environ.get("ALBERT_KERAS_DATA", "tests/data"),
    help="the folder holding tasks/brown_tags (the repository's tests/data)",
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="default: beside --init, or the embedded one")
parser.add_argument(
    "--tags",
    default="pos",
    help="pos (11 universal POS tags) or tags (BIO name/title chunks; harder: "
    "an uncased vocabulary loses the capitals)",
)
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--train-examples", type=int, help="a seeded draw (default all)")
parser.add_argument("--output", default="runs/example_tag")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "brown_tags")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(the repository's tests/data, or set $ALBERT_KERAS_DATA)"
    )
task = TokenClassificationTask(tags_field=args.tags, sequence_length=64)
result = task.fit(
    args.init,
    os.path.join(folder, "train.jsonl"),
    os.path.join(folder, "dev.jsonl"),
    output_dir=args.output,
    vocab=args.vocab,
    epochs=args.epochs,
    jit_compile=not args.no_jit,
    max_train_examples=args.train_examples,
    batch_size=16,
    learning_rate=1e-3,
)
best, baselines = result["best"], result["baselines"]
print(
    f"dev {task.monitor} {best[task.monitor]:.3f} (most common tag "
    f"{baselines['majority_tag'][task.monitor]:.3f}, each word's most common "
    f"tag {baselines['word_majority'][task.monitor]:.3f})"
)

# The SavedModel that `fit` wrote: serve(texts) -> words and a tag per word.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
out = served.serve(tf.constant(["Mr. Hartsfield met the Fulton County jury ."]))
words = [w.decode() for w in out["words"][0].numpy() if w]
tags = [t.decode() for t in out["tags"][0].numpy()[: len(words)]]
print(" ".join(f"{w}/{t}" for w, t in zip(words, tags, strict=True)))
