"""Movie-review sentiment (rt_sentiment, the source of SST-2) with plain `model.fit`.

    python examples/classify_rt_sentiment.py                      # random init
    python examples/classify_rt_sentiment.py --init runs/pretrain/pretrainer.keras

The task (`ClassificationTask`) reads the JSON Lines files and makes the
tf.data pipelines, the model and its loss; the training is your own
`model.compile` + `model.fit`. Then dev accuracy next to the majority class,
and the model wrapped with its tokenizer: raw strings in, and a SavedModel
whose `serve` signature takes `tf.string`.
"""

import argparse
import os

from albert_keras.tasks import ClassificationTask
from albert_keras.tokenizers import load_tokenizer
from albert_keras.training.optimizers import create_optimizer
from checkpoints_convert.backbone_loader import find_vocabulary, load_backbone

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
task = ClassificationTask(num_classes=2, text_fields=("text",), sequence_length=64)
train = task.read(os.path.join(folder, "train.jsonl"), training=True)
dev = task.read(os.path.join(folder, "dev.jsonl"))
print(train.report.summary())
train = train.subset(args.train_examples, seed=0)  # the file is sorted by label

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
train_data = task.dataset(train, tokenizer, batch_size=32, training=True)
dev_data = task.dataset(dev, tokenizer, batch_size=64)
model = task.build_model(load_backbone(args.init, tokenizer.vocabulary_size()))
steps = args.epochs * -(-len(train.examples) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss=task.losses()[0],
    jit_compile=not args.no_jit,
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)

accuracy = task.scores(model, dev, dev_data)["accuracy"]
majority = task.baselines(train, dev)["majority_class"]["accuracy"]
print(f"dev accuracy {accuracy:.3f} (majority class {majority:.3f})")

text_model = task.text_model(model, tokenizer)
print(text_model.predict(["A gorgeous, witty film.", "Tedious and dull."], verbose=0))
os.makedirs(args.output, exist_ok=True)
# serve(tf.string); verbose=False: no listing of its signature's TensorSpecs.
text_model.export(os.path.join(args.output, "savedmodel"), verbose=False)
model.save(os.path.join(args.output, "classifier.keras"))
