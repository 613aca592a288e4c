"""Fact verification on pairs (vitaminc: evidence, claim -> True/False/Neither).

    python examples/pair_vitaminc.py [--init runs/pretrain/pretrainer.keras]

`ClassificationTask` with two text fields packs `[CLS] evidence [SEP] claim
[SEP]` with segment ids, cut by the official `_truncate_seq_pair`, for the
same `AlbertClassifier`; `task.fit` trains it (AdamW, the best dev epoch
kept) and exports it as a SavedModel on raw strings.
"""

import argparse
import os

import tensorflow as tf

from albert_keras.tasks import ClassificationTask

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data", default=os.environ.get("ALBERT_KERAS_DATA", "../shared/data")
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="default: beside --init, or the embedded one")
parser.add_argument("--train-examples", type=int, default=3000)
parser.add_argument("--dev-examples", type=int, default=1000)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--output", default="runs/vitaminc")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "vitaminc")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )
task = ClassificationTask(text_fields=("text_a", "text_b"))  # labels: from train
result = task.fit(
    args.init,
    os.path.join(folder, "train.jsonl"),
    os.path.join(folder, "dev.jsonl"),
    output_dir=args.output,
    vocab=args.vocab,
    epochs=args.epochs,
    jit_compile=not args.no_jit,
    learning_rate=1e-4,
    max_train_examples=args.train_examples,  # a seeded draw, kept in file order
    max_dev_examples=args.dev_examples,
)
best, majority = result["best"], result["baselines"]["majority_class"]
print(
    f"labels {task.config.labels}: dev accuracy {best['accuracy']:.3f}, macro F1 "
    f"{best['f1']:.3f}, MCC {best['mcc']:.3f} (majority class "
    f"{majority['accuracy']:.3f})"
)

# The SavedModel that `fit` wrote: `serve_pairs(text_a, text_b)` on tf.string.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
evidence = tf.constant(["The film grossed $12 million in its first week."])
claim = tf.constant(["The film made more than $10 million in its first week."])
logits = served.serve_pairs(evidence, claim)["logits"]
probabilities = tf.nn.softmax(logits)[0].numpy().round(3).tolist()
print(dict(zip(task.config.labels, probabilities, strict=True)))
