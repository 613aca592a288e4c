"""Movie-review sentiment (rt_sentiment, the source of SST-2) with plain `model.fit`.

    python examples/classify_rt_sentiment.py                      # random init
    python examples/classify_rt_sentiment.py --init runs/pretrain/pretrainer.keras

Reads the JSON Lines files, packs them in a tf.data pipeline, fine-tunes an
`AlbertClassifier` with AdamW, reports dev accuracy next to the majority
class, then wraps the model with its tokenizer: raw strings in, and a
SavedModel whose `serve` signature takes `tf.string`.
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
from albert_keras.models import with_tokenizer
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
parser.add_argument("--output", default="runs/rt_sentiment")
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "rt_sentiment")
train, labels, report = read_task_file(os.path.join(folder, "train.jsonl"), "classify")
dev, _, _ = read_task_file(os.path.join(folder, "dev.jsonl"), "classify", labels)
print(report.summary())
train = [train[i] for i in np.random.default_rng(0).permutation(len(train))]
train = train[: args.train_examples]

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
train_data = text_dataset(train, tokenizer, 64, 32, training=True)
dev_data = text_dataset(dev, tokenizer, 64, 64)

model = AlbertClassifier(load_backbone(args.init, tokenizer.vocabulary_size()), 2)
steps = args.epochs * -(-len(train) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
    jit_compile=True,
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)

logits = model.predict(dev_data, verbose=0)["logits"]
gold = [e["label"] for e in dev]
scores = classification_scores(gold, logits, 2)
majority = max(np.mean(np.asarray(gold) == c) for c in (0, 1))
print(f"dev accuracy {scores['accuracy']:.3f} (majority class {majority:.3f})")

text_model = with_tokenizer(model, tokenizer, 64)
print(text_model.predict(["A gorgeous, witty film.", "Tedious and dull."], verbose=0))
os.makedirs(args.output, exist_ok=True)
text_model.export(
    os.path.join(args.output, "savedmodel"), verbose=False
)  # serve(tf.string)
model.save(os.path.join(args.output, "classifier.keras"))
