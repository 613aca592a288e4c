"""Extractive QA with unanswerable questions (disfl_qa: SQuAD 2.0 JSON).

    python examples/squad_disfl_qa.py [--init runs/pretrain/pretrainer.keras]

Contexts are cut into windows with a document stride; the official v2 head
(`AlbertSquadV2`: start logits, end logits conditioned on the start, an
answer-class logit for "no answer", beam search at inference) or the simple
start/end head (`AlbertSpanQA`) is trained with `model.fit`; the n-best
spans are decoded back to text and scored with the official SQuAD 2.0 rules,
the no-answer threshold chosen on dev.
"""

import argparse
import json
import os

import keras
import numpy as np

from albert_keras.tasks.finetune_run import find_vocabulary, load_backbone
from albert_keras.tasks.span_predictions import decode_spans
from albert_keras.tasks.squad_evaluation import squad_evaluate
from albert_keras.tasks.squad_features import squad_dataset, squad_features
from albert_keras.tasks.task_reader import read_squad_file
from albert_keras.models import AlbertSpanQA, with_tokenizer
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
parser.add_argument("--head", default="v2", choices=["v2", "simple"])
parser.add_argument("--train-questions", type=int, default=2000)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--output", default="runs/example_squad")
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "disfl_qa")
train, _, report = read_squad_file(os.path.join(folder, "train.json"), training=True)
dev, dev_json, _ = read_squad_file(os.path.join(folder, "dev.json"), training=False)
print(report.summary())
train = [train[i] for i in np.random.default_rng(0).permutation(len(train))]
train = train[: args.train_questions]

tokenizer = load_tokenizer(find_vocabulary(args.init, args.vocab))
windows = dict(sequence_length=128, doc_stride=64, max_query_length=32)
train_features, _ = squad_features(train, tokenizer, **windows)
dev_features, dev_contexts = squad_features(dev, tokenizer, **windows)
train_data = squad_dataset(train_features, 32, training=True, head=args.head)
dev_data = squad_dataset(dev_features, 64, head=args.head)

backbone = load_backbone(args.init, tokenizer.vocabulary_size())
if args.head == "v2":
    from albert_keras.models import AlbertSquadV2

    model = AlbertSquadV2(backbone)
    losses, loss_weights = AlbertSquadV2.official_losses()
else:
    model = AlbertSpanQA(backbone)
    cross_entropy = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = {"start_logits": cross_entropy, "end_logits": cross_entropy}
    loss_weights = {"start_logits": 0.5, "end_logits": 0.5}
steps = args.epochs * -(-len(train_features["token_ids"]) // 32)
model.compile(
    optimizer=create_optimizer("adamw", 1e-4, steps, steps // 10),
    loss=losses,
    loss_weights=loss_weights,
)
# shuffle=False: the pipeline shuffles (Keras warns that its own shuffle does not
# apply to a tf.data.Dataset otherwise).
model.fit(train_data, validation_data=dev_data, epochs=args.epochs, shuffle=False)

outputs = {k: np.asarray(v) for k, v in model.predict(dev_data).items()}
answers, null_odds = decode_spans(dev_features, dev_contexts, outputs, args.head)
predictions = {dev[i]["id"]: text for i, text in answers.items()}
odds = {dev[i]["id"]: value for i, value in null_odds.items()}
result = squad_evaluate(dev_json, predictions, odds, na_prob_threshold=0.0)
always_null = squad_evaluate(dev_json, {e["id"]: "" for e in dev})
print(
    f"dev EM {result['exact']:.1f} F1 {result['f1']:.1f}; with the best no-answer "
    f"threshold ({result['best_f1_thresh']:.2f}) F1 {result['best_f1']:.1f}; "
    f"always no answer: F1 {always_null['f1']:.1f}"
)

# Raw strings in, answers out: the same windows and decoding in TensorFlow ops,
# with the no-answer threshold chosen on dev; the SavedModel serves it.
reader = with_tokenizer(
    model,
    tokenizer,
    windows["sequence_length"],
    doc_stride=windows["doc_stride"],
    max_query_length=windows["max_query_length"],
    null_threshold=result["best_f1_thresh"],
)
with open(os.path.join(folder, "dev.json")) as f:
    paragraph = json.load(f)["data"][0]["paragraphs"][0]
question = paragraph["qas"][0]["question"]
answer = reader({"question": [question], "context": [paragraph["context"]]})
print(f"{question!r} -> {answer['answer'].numpy()[0].decode()!r}")
os.makedirs(args.output, exist_ok=True)
reader.export(os.path.join(args.output, "savedmodel"), verbose=False)
