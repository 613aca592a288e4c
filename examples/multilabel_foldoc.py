"""Multi-label classification: computing terms -> their subjects (FOLDOC).

    python examples/multilabel_foldoc.py [--init runs/pretrain/pretrainer.keras]

Each definition of the FOLDOC slice has any number of 10 subject labels
(`networking`, `protocol`, `language`, ...; `[]` for none).
`MultiLabelClassificationTask` gives each label a sigmoid of its own and
trains them with binary cross-entropy; the threshold above which a label is
predicted is chosen on dev (the best micro F1), and the exported SavedModel's
`assets.extra/multi_label.json` keeps it.
"""

import argparse
import json
import os

import numpy as np
import tensorflow as tf

from albert_keras.tasks import MultiLabelClassificationTask

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data",
    default=os.environ.get("ALBERT_KERAS_DATA", "tests/data"),
    help="the folder holding tasks/foldoc_topics (the repository's tests/data)",
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="default: beside --init, or the embedded one")
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--train-examples", type=int, help="a seeded draw (default all)")
parser.add_argument("--output", default="runs/example_multilabel")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "foldoc_topics")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(the repository's tests/data, or set $ALBERT_KERAS_DATA)"
    )
task = MultiLabelClassificationTask(label_fields="topics", sequence_length=96)
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
    f"dev micro F1 {best['micro_f1']:.3f} at threshold {best['threshold']} "
    f"(commonest label set {baselines['majority_set']['micro_f1']:.3f}, "
    f"labels by training frequency {baselines['label_frequencies']['micro_f1']:.3f})"
)

# The SavedModel that `fit` wrote: logits per label, beside their names and
# the threshold.
saved = os.path.join(args.output, "savedmodel")
served = tf.saved_model.load(saved)
with open(os.path.join(saved, "assets.extra", "labels.json")) as f:
    labels = json.load(f)
with open(os.path.join(saved, "assets.extra", "multi_label.json")) as f:
    threshold = json.load(f)["threshold"]
text = "TCP: The transport protocol of the Internet, over IP."
logits = served.serve(tf.constant([text]))["logits"][0].numpy()
probabilities = 1 / (1 + np.exp(-logits))
print(
    text, "->", [x for x, p in zip(labels, probabilities, strict=True) if p > threshold]
)
