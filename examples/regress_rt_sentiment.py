"""Regression (STS-B style): a sentiment score, `ClassificationTask(num_classes=1)`.

    python examples/regress_rt_sentiment.py [--init runs/pretrain/pretrainer.keras]

The shared data has no graded-similarity set, so the target here is the
rt_sentiment label read as a score in [0, 1]; any JSON Lines file with a
numeric `label` (and `text` or `text_a` + `text_b`) works the same. One
output, mean squared error; `task.fit` keeps the dev epoch of best Pearson
correlation and reports Spearman too, STS-B's metrics.
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
parser.add_argument("--train-examples", type=int, default=2000)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--output", default="runs/regress_rt_sentiment")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "rt_sentiment")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )
task = ClassificationTask(num_classes=1, text_fields=("text",), sequence_length=64)
result = task.fit(
    args.init,
    os.path.join(folder, "train.jsonl"),
    os.path.join(folder, "dev.jsonl"),
    output_dir=args.output,
    vocab=args.vocab,
    epochs=args.epochs,
    jit_compile=not args.no_jit,
    learning_rate=1e-4,
    max_train_examples=args.train_examples,
)
best = result["best"]
constant = result["baselines"]["train_mean"]  # predicting the training mean
print(
    f"dev Pearson {best['pearson']:.3f}, Spearman {best['spearman']:.3f}, "
    f"MSE {best['mse']:.4f} (training mean: MSE {constant['mse']:.4f})"
)

# The SavedModel that `fit` wrote: `serve(texts)` on tf.string, one score each.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
texts = ["A gorgeous, witty film.", "Tedious and dull."]
# + 0.0: a score that rounds to zero from below prints 0.0, not -0.0.
scores = served.serve(tf.constant(texts))["logits"][:, 0].numpy().round(3) + 0.0
print(dict(zip(texts, scores.tolist(), strict=True)))
