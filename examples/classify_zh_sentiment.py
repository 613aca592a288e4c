"""Chinese review sentiment (zh_sentiment) with a WordPiece vocabulary (as *_zh).

    python examples/classify_zh_sentiment.py
    python examples/classify_zh_sentiment.py --vocab vocab_chinese.txt --init DIR

Without --vocab, a WordPiece vocabulary is learned from the training texts
first (`build_wordpiece_vocabulary`, BERT's basic tokenization: one token per
CJK character); the official `vocab_chinese.txt` of the releases works the
same way. `task.fit` tokenizes with it and exports it inside the SavedModel.
"""

import argparse
import os

import tensorflow as tf

from albert_keras.tasks import ClassificationTask
from albert_keras.tokenizers import build_wordpiece_vocabulary

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
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "zh_sentiment")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )
train_file = os.path.join(folder, "train.jsonl")
vocab = args.vocab
if vocab is None:  # learned into its own folder; the run copies it beside its model
    vocab = os.path.join(args.output, "wordpiece", "vocab.txt")
    os.makedirs(os.path.dirname(vocab), exist_ok=True)
    build_wordpiece_vocabulary([train_file], vocab, vocab_size=8000)

task = ClassificationTask(num_classes=2, text_fields=("text",))
result = task.fit(
    args.init,
    train_file,
    os.path.join(folder, "dev.jsonl"),
    output_dir=args.output,
    vocab=vocab,
    epochs=args.epochs,
    jit_compile=not args.no_jit,
    learning_rate=1e-4,
    max_train_examples=args.train_examples,  # a seeded draw: the file is sorted
)
accuracy = result["best"]["accuracy"]
majority = result["baselines"]["majority_class"]["accuracy"]
print(f"dev accuracy {accuracy:.3f} (majority class {majority:.3f})")

# The SavedModel that `fit` wrote: `serve(texts)` on tf.string.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
texts = ["这本书写得很好，值得一读。", "质量太差了，不推荐购买。"]
positive = tf.nn.softmax(served.serve(tf.constant(texts))["logits"])[:, 1]
print(dict(zip(texts, positive.numpy().round(3).tolist(), strict=True)))
