"""Search embeddings: find the evidence a claim was checked on (vitaminc).

    python examples/embed_vitaminc.py [--init runs/pretrain/pretrainer.keras]

The vitaminc claims labelled True, each with the Wikipedia sentence that
supports it, are (anchor, positive) pairs: `SentenceEmbeddingTask` trains
an `AlbertBiEncoder` to give a claim and its evidence nearby vectors, the
batch's other evidence as negatives (sentence-transformers'
`MultipleNegativesRankingLoss`). Dev is scored by retrieval: each dev claim
ranks every dev evidence sentence; the export takes raw text.
"""

import argparse
import json
import os

import numpy as np
import tensorflow as tf

from albert_keras.tasks import SentenceEmbeddingTask

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
parser.add_argument("--output", default="runs/vitaminc_embed")
parser.add_argument(
    "--no-jit", action="store_true", help="without XLA (quicker for tiny runs)"
)
args = parser.parse_args()

folder = os.path.join(args.data, "tasks", "vitaminc")
if not os.path.isdir(folder):
    parser.error(
        f"{folder} does not exist: pass --data, the folder holding tasks/ "
        "(tests/data for the small copies, or set $ALBERT_KERAS_DATA)"
    )


def supported_claims(split):
    """{"query": claim, "positive": evidence} of the claims labelled True."""
    with open(os.path.join(folder, f"{split}.jsonl"), encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    return [
        {"query": r["text_b"], "positive": r["text_a"]}
        for r in records
        if r["label"] == "True"
    ]


task = SentenceEmbeddingTask(pooling="mean")
result = task.fit(
    args.init,
    supported_claims("train"),
    supported_claims("dev"),
    output_dir=args.output,
    vocab=args.vocab,
    epochs=args.epochs,
    batch_size=32,
    learning_rate=1e-4,
    jit_compile=not args.no_jit,
    max_train_examples=args.train_examples,  # a seeded draw, kept in file order
    max_dev_examples=args.dev_examples,
)
best, tfidf = result["best"], result["baselines"]["tfidf"]
print(
    f"dev retrieval: MRR {best['mrr']:.3f}, top-1 {best['accuracy']:.3f}, recall@10 "
    f"{best['recall_at_10']:.3f} (TF-IDF: MRR {tfidf['mrr']:.3f}, top-1 "
    f"{tfidf['accuracy']:.3f})"
)

# The SavedModel that `fit` wrote: `serve(texts)` -> unit-length vectors.
served = tf.saved_model.load(os.path.join(args.output, "savedmodel"))
claim = "The film made more than $10 million in its first week."
evidence = [
    "The film grossed $12 million in its first week.",
    "The band released its third album in 1998.",
]
vectors = served.serve(tf.constant([claim, *evidence]))["embeddings"].numpy()
print(dict(zip(evidence, np.round(vectors[1:] @ vectors[0], 3).tolist(), strict=True)))
