"""Extractive QA with unanswerable questions (disfl_qa: SQuAD 2.0 JSON).

    python examples/squad_disfl_qa.py [--init runs/pretrain/pretrainer.keras]

`SquadTask` cuts contexts into windows with a document stride and trains the
official v2 head (`AlbertSquadV2`: start logits, end logits conditioned on
the start, an answer-class logit for "no answer", beam search at inference)
or the simple start/end head (`AlbertSpanQA`); `task.fit` decodes the n-best
spans back to text every epoch, scores them with the official SQuAD 2.0
rules and chooses the no-answer threshold on dev, which the exported
SavedModel applies.
"""

import argparse
import os

import tensorflow as tf

from albert_keras.tasks import SquadTask

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument(
    "--data", default=os.environ.get("ALBERT_KERAS_DATA", "../shared/data")
)
parser.add_argument(
    "--init", default="albert_small", help="preset, .keras or checkpoint"
)
parser.add_argument("--vocab", help="default: beside --init, or the embedded one")
parser.add_argument("--head", default="v2", choices=["v2", "simple"])
parser.add_argument("--train-questions", type=int, default=2000)
parser.add_argument("--dev-questions", type=int, help="a seeded draw (default all)")
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--output", default="runs/example_squad")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "disfl_qa")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )
task = SquadTask(head=args.head, sequence_length=128, doc_stride=64)
result = task.fit(
    args.init,
    os.path.join(folder, "train.json"),
    os.path.join(folder, "dev.json"),
    output_dir=args.output,
    vocab=args.vocab,
    epochs=args.epochs,
    jit_compile=not args.no_jit,
    learning_rate=1e-4,
    max_train_examples=args.train_questions,  # questions, before the windows
    max_dev_examples=args.dev_questions,
)
best, always_null = result["best"], result["baselines"]["always_no_answer"]
print(
    f"dev EM {best['exact']:.1f} F1 {best['f1']:.1f}; with the best no-answer "
    f"threshold ({best['best_f1_thresh']:.3g}) F1 {best['best_f1']:.1f}; "
    f"always no answer: F1 {always_null['f1']:.1f}"
)

# The SavedModel that `fit` wrote: serve(question, context) on tf.string, the
# same windows and decoding in TensorFlow ops, the dev threshold applied.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
context = "In 1656 , the plague killed about half of Naples ' 300 , 000 inhabitants ."
questions = [
    "How many no I mean what share of Naples ' people did the plague kill ?",
    "When did the plague reach uh sorry leave Rome ?",
]
answers = served.serve(tf.constant(questions), tf.constant([context] * 2))
for question, answer in zip(questions, answers["answer"].numpy(), strict=True):
    print(f"{question!r} -> {answer.decode()!r}")
