"""Regression (STS-B style): a sentiment score, `AlbertClassifier(num_classes=1)` + MSE.

    python examples/regress_rt_sentiment.py [--init runs/pretrain/pretrainer.keras]

The shared data has no graded-similarity set, so the target here is the
rt_sentiment label read as a score in [0, 1]; any JSON Lines file with a
numeric `label` (and `text` or `text_a` + `text_b`) works the same. Reports
Pearson and Spearman correlation, STS-B's metrics.
"""

import argparse
import os

import keras
import numpy as np

from albert_keras import AlbertClassifier
from albert_keras.tasks.dev_evaluation import regression_scores
from albert_keras.tasks.finetune_run import find_vocabulary, load_backbone
from albert_keras.tasks.task_datasets import text_dataset
from albert_keras.tasks.task_reader import read_task_file
from albert_keras.tokenizers import load_tokenizer
from albert_keras.training.optimizers import create_optimizer

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
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "rt_sentiment")
train, _, _ = read_task_file(os.path.join(folder, "train.jsonl"), "regress")
dev, _, _ = read_task_file(os.path.join(folder, "dev.jsonl"), "regress")
train = [train[i] for i in np.random.default_rng(0).permutation(len(train))]
train = train[: args.train_examples]

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
train_data = text_dataset(train, tokenizer, 64, 32, training=True, regression=True)
dev_data = text_dataset(dev, tokenizer, 64, 64, regression=True)
model = AlbertClassifier(load_backbone(args.init, tokenizer.vocabulary_size()), 1)
steps = args.epochs * -(-len(train) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss={"logits": keras.losses.MeanSquaredError()},
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)
scores = regression_scores([e["label"] for e in dev], model.predict(dev_data)["logits"])
print(
    f"dev Pearson {scores['pearson']:.3f}, Spearman {scores['spearman']:.3f}, "
    f"MSE {scores['mse']:.4f}"
)
