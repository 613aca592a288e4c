"""Multiple choice, RACE style (social_iqa: context + question, 3 options).

    python examples/choice_social_iqa.py [--init runs/pretrain/pretrainer.keras]

`MultipleChoiceTask` packs every option with its context, `[CLS] context
question [SEP] option [SEP]`, into a [batch, 3, length] input;
`AlbertMultipleChoice` runs them all through the backbone and scores each
option. `task.fit` trains it and exports a SavedModel on raw strings.
"""

import argparse
import os

import tensorflow as tf

from albert_keras.tasks import MultipleChoiceTask

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data", default=os.environ.get("ALBERT_KERAS_DATA", "../shared/data")
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="default: beside --init, or the embedded one")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--train-examples", type=int, help="a seeded draw (default all)")
parser.add_argument("--output", default="runs/example_choice")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "social_iqa")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )
# Records with 2 or 4 options are skipped, and counted in the printed report.
task = MultipleChoiceTask(num_choices=3, sequence_length=64)
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
    learning_rate=5e-5,
)
best, majority = result["best"], result["baselines"]["majority_class"]
print(
    f"dev accuracy {best['accuracy']:.3f} (chance {1 / 3:.3f}, most common "
    f"answer position {majority['accuracy']:.3f})"
)

# The SavedModel that `fit` wrote: serve(context [batch], options [batch, 3]).
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
context = "Jordan walked home in the rain without an umbrella. How did Jordan feel?"
options = ["wet and annoyed", "proud of the weather", "sleepy"]
logits = served.serve(tf.constant([context]), tf.constant([options]))["logits"]
probabilities = tf.nn.softmax(logits)[0].numpy().round(3).tolist()
print(dict(zip(options, probabilities, strict=True)))
