"""Chinese review sentiment (zh_sentiment) with a WordPiece vocabulary (as *_zh).

    python examples/classify_zh_sentiment.py
    python examples/classify_zh_sentiment.py --vocab vocab_chinese.txt --init DIR

Without --vocab, a WordPiece vocabulary is learned from the training texts
first (`build_wordpiece_vocabulary`, BERT's basic tokenization: one token per
CJK character); the official `vocab_chinese.txt` of the releases works the
same way.
"""

import argparse
import os

import keras
import numpy as np

from albert_keras import AlbertClassifier
from albert_keras.tasks.dev_evaluation import classification_scores
from albert_keras.tasks.finetune_run import load_backbone
from albert_keras.tasks.task_datasets import text_dataset
from albert_keras.tasks.task_reader import read_task_file
from albert_keras.tokenizers import build_wordpiece_vocabulary, load_tokenizer
from albert_keras.training.optimizers import create_optimizer

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data", default=os.environ.get("ALBERT_KERAS_DATA", "../shared/data")
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="a WordPiece vocab.txt (default: learn one)")
parser.add_argument("--train-examples", type=int, default=3000)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--output", default="runs/zh_sentiment")
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "zh_sentiment")
train_file = os.path.join(folder, "train.jsonl")
train, labels, _ = read_task_file(train_file, "classify")
dev, _, _ = read_task_file(os.path.join(folder, "dev.jsonl"), "classify", labels)
train = [train[i] for i in np.random.default_rng(0).permutation(len(train))]
train = train[: args.train_examples]  # the file is sorted by label

vocab = args.vocab
if vocab is None:
    os.makedirs(args.output, exist_ok=True)
    vocab = build_wordpiece_vocabulary(
        [train_file], os.path.join(args.output, "vocab.txt"), vocab_size=8000
    )
tokenizer = load_tokenizer(vocab)
train_data = text_dataset(train, tokenizer, 128, 32, training=True)
dev_data = text_dataset(dev, tokenizer, 128, 64)
model = AlbertClassifier(load_backbone(args.init, tokenizer.vocabulary_size()), 2)
steps = args.epochs * -(-len(train) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)
gold = np.asarray([e["label"] for e in dev])
scores = classification_scores(gold, model.predict(dev_data)["logits"], 2)
majority = np.bincount(gold).max() / len(gold)
print(f"dev accuracy {scores['accuracy']:.3f} (majority class {majority:.3f})")
