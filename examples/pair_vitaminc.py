"""Fact verification on pairs (vitaminc: evidence, claim -> True/False/Neither).

    python examples/pair_vitaminc.py [--init runs/pretrain/pretrainer.keras]

Pairs are packed `[CLS] evidence [SEP] claim [SEP]` with segment ids, cut by
the official `_truncate_seq_pair`; the model is the same `AlbertClassifier`.
"""

import argparse
import os

import keras
import numpy as np

from albert_keras import AlbertClassifier
from albert_keras.tasks.dev_evaluation import classification_scores
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
parser.add_argument("--train-examples", type=int, default=3000)
parser.add_argument("--dev-examples", type=int, default=1000)
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "vitaminc")
train, labels, _ = read_task_file(os.path.join(folder, "train.jsonl"), "pair")
dev, _, _ = read_task_file(os.path.join(folder, "dev.jsonl"), "pair", labels)
rng = np.random.default_rng(0)
train = [train[i] for i in rng.permutation(len(train))[: args.train_examples]]
dev = [dev[i] for i in rng.permutation(len(dev))[: args.dev_examples]]

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
train_data = text_dataset(train, tokenizer, 128, 32, training=True)
dev_data = text_dataset(dev, tokenizer, 128, 64)
model = AlbertClassifier(
    load_backbone(args.init, tokenizer.vocabulary_size()), num_classes=len(labels)
)
steps = args.epochs * -(-len(train) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)

gold = np.asarray([e["label"] for e in dev])
scores = classification_scores(gold, model.predict(dev_data)["logits"], len(labels))
majority = np.bincount(gold).max() / len(gold)
print(
    f"labels {labels}: dev accuracy {scores['accuracy']:.3f}, macro F1 "
    f"{scores['f1']:.3f}, MCC {scores['mcc']:.3f} (majority class {majority:.3f})"
)
