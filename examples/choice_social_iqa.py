"""Multiple choice, RACE style (social_iqa: context + question, 3 options).

    python examples/choice_social_iqa.py [--init runs/pretrain/pretrainer.keras]

Every option is packed with its context, `[CLS] context question [SEP]
option [SEP]`, into a [batch, 3, length] input; `AlbertMultipleChoice` runs
them all through the backbone and scores each option.
"""

import argparse
import os

import keras
import numpy as np

from albert_keras import AlbertMultipleChoice
from albert_keras.tasks.finetune_run import find_vocabulary, load_backbone
from albert_keras.tasks.task_datasets import choice_dataset
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
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--output", default="runs/example_choice")
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "social_iqa")
train, choices, report = read_task_file(os.path.join(folder, "train.jsonl"), "choice")
dev, _, _ = read_task_file(os.path.join(folder, "dev.jsonl"), "choice", choices)
print(report.summary())  # three training records have 2 or 4 options: skipped

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
train_data = choice_dataset(train, tokenizer, 64, 16, training=True)
dev_data = choice_dataset(dev, tokenizer, 64, 32)
model = AlbertMultipleChoice(
    load_backbone(args.init, tokenizer.vocabulary_size()), num_choices=choices
)
steps = args.epochs * -(-len(train) // 16)
model.compile(
    optimizer=create_optimizer("adamw", 5e-5, steps, steps // 10),
    loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
    metrics={"logits": ["sparse_categorical_accuracy"]},
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)
predicted = np.argmax(model.predict(dev_data)["logits"], axis=-1)
accuracy = np.mean(predicted == [e["label"] for e in dev])
print(f"dev accuracy {accuracy:.3f} (chance {1 / choices:.3f})")

# Raw strings in: a context and its options, one score per option.
text_model = with_tokenizer(model, tokenizer, 64)
question = {"context": [dev[0]["context"]], "options": [dev[0]["options"]]}
print(text_model.predict(question, verbose=0)["logits"])
os.makedirs(args.output, exist_ok=True)
text_model.export(
    os.path.join(args.output, "savedmodel"), verbose=False
)  # serve(context [batch], options [batch, 3])
