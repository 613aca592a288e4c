"""`SentenceEmbeddingTask`: pairs of texts -> an encoder whose vectors match
them (a bi-encoder for semantic search)."""

from __future__ import annotations

import dataclasses

import numpy as np

from albert_keras.models.embedding_pooling import check_pooling
from albert_keras.tasks.jsonl_records import (
    check_kept,
    check_text,
    collect_examples,
    read_records,
)
from albert_keras.tasks.retrieval_scores import (
    candidate_texts,
    random_baseline,
    rank_scores,
    tfidf_baseline,
    vector_ranks,
)
from albert_keras.tasks.task import Task
from albert_keras.tasks.task_data import TaskData
from albert_keras.training.in_batch_negatives_loss import check_scale

# The (anchor, positive) keys looked for when `text_fields` is not given, in
# this order; a "negative" key beside them is a hard negative.
PAIR_KEYS = (
    ("anchor", "positive"),
    ("query", "positive"),
    ("query", "document"),
    ("query", "passage"),
    ("question", "answer"),
    ("sentence1", "sentence2"),
    ("text_a", "text_b"),
)
_FIELD_FLAGS = (
    "Name the anchor with --text-field, its positive with --text-pair-field "
    "(and a hard negative with --negative-field)"
)


@dataclasses.dataclass
class SentenceEmbeddingConfig:
    """Settings of a `SentenceEmbeddingTask`.

    Args:
        text_fields: the record keys of the anchor (query), its positive
            and, optionally, hard negatives, in that order; () = found in
            the training file (`PAIR_KEYS`, with "negative" where there).
        sequence_length: packed length of each text (`[CLS] text [SEP]`).
        pooling: how the final hidden states become one vector: "mean",
            "max", "cls" or "pooled" (`AlbertEmbeddingTextModel`'s).
        scale: the inverse temperature of the cosines in the loss (20, as
            sentence-transformers').
        symmetric: also train each positive to find its anchor among the
            batch's anchors (CLIP's loss).
    """

    text_fields: tuple = ()
    sequence_length: int = 128
    pooling: str = "mean"
    scale: float = 20.0
    symmetric: bool = False

    def __post_init__(self):
        if isinstance(self.text_fields, str):
            self.text_fields = tuple(f.strip() for f in self.text_fields.split(","))
        self.text_fields = tuple(self.text_fields)
        if len(self.text_fields) == 1:
            raise ValueError(
                "`text_fields` names the anchor and its positive (then any hard "
                f"negatives): two keys or more. Received: {self.text_fields}"
            )
        check_pooling(self.pooling)
        check_scale(self.scale)


class SentenceEmbeddingTask(Task):
    """Sentence embeddings trained on pairs, the batch's other texts as negatives.

    Records (JSON Lines, or CSV/TSV with a header): an anchor (a query, a
    question, a claim) and its positive (the passage, answer or paraphrase
    that matches it), optionally a hard negative (a text that looks like a
    match and is not); field names through `text_fields`. The model is
    `AlbertBiEncoder`, trained with `InBatchNegativesLoss` (each anchor must
    pick its positive among all the batch's positives and negatives:
    sentence-transformers' `MultipleNegativesRankingLoss`); a larger
    `--batch-size` gives more negatives. The dev score is retrieval: each
    dev anchor ranks every distinct positive and negative text of the dev
    set by cosine, scored by MRR, accuracy (its positive first) and
    recall at 10; the baselines are random ranking and TF-IDF. The export
    is an `AlbertEmbeddingTextModel` (raw text in, unit vectors out).

    Example:
    >>> task = SentenceEmbeddingTask()
    >>> data = task.read([{"query": "Who wrote Emma?", "positive": "Jane Austen"}])
    >>> task.config.text_fields, data.examples[0]["texts"]
    (('query', 'positive'), ['Who wrote Emma?', 'Jane Austen'])
    """

    config_class = SentenceEmbeddingConfig
    monitor = "mrr"
    metric_names = ("mrr", "accuracy", "recall_at_10")
    groups_by_length = True
    prediction_formats = ".jsonl, .csv or .tsv"

    def read(self, source, training=False, require_labels=True):
        # Nothing is a label: every record needs its texts, to predict too.
        records, report = read_records(source, require_labels=False)
        check_kept(report, records, _FIELD_FLAGS)
        if not self.config.text_fields:
            fields = _find_fields(records, report)
            self.config = dataclasses.replace(self.config, text_fields=fields)
        ids = {}
        examples = collect_examples(
            records, report, lambda record: self._example(record, ids), _FIELD_FLAGS
        )
        return TaskData(examples, report)

    def _example(self, record, ids):
        fields = self.config.text_fields
        missing = [f for f in fields if f not in record]
        if missing:
            return f"no {' / '.join(missing)}"
        texts = [record[f] for f in fields]
        for field, text in zip(fields, texts, strict=True):
            if problem := check_text(text):
                return f"{field}: {problem}"
        positive_id = ids.setdefault(texts[1], len(ids))
        return {"texts": texts, "positive_id": positive_id}

    def dataset(
        self,
        data,
        tokenizer,
        batch_size,
        training=False,
        seed=0,
        epochs=None,
        group_by_length=False,
    ):
        from albert_keras.tasks.task_datasets import embedding_dataset

        if training and batch_size < 2:
            raise ValueError(
                f"--batch-size {batch_size}: each anchor is trained against the "
                "other examples of its batch, so a batch of one has nothing to "
                "tell its positive from. Use 2 or more (32 to 256 is usual: more "
                "negatives, better vectors)."
            )
        return embedding_dataset(
            data.examples,
            tokenizer,
            self.config.sequence_length,
            batch_size,
            training,
            seed,
            data.report,
            epochs=epochs,
            group_by_length=group_by_length,
        )

    def build_model(self, backbone):
        from albert_keras.models.albert_bi_encoder import AlbertBiEncoder

        return AlbertBiEncoder(
            backbone,
            num_texts=len(self.config.text_fields),
            pooling=self.config.pooling,
        )

    def losses(self):
        from albert_keras.training.in_batch_negatives_loss import (
            InBatchNegativesLoss,
        )

        c = self.config
        return {"embeddings": InBatchNegativesLoss(c.scale, c.symmetric)}, None

    def scores(self, model, data, dataset):
        ranks, *_ = self._ranked(model, data, dataset)
        return rank_scores(ranks)

    def _ranked(self, model, data, dataset):
        """(ranks, best, own, top) of `vector_ranks`, and the candidate texts."""
        vectors = np.asarray(model.predict(dataset, verbose=0)["embeddings"])
        texts, rows, relevant = candidate_texts(data.examples)
        candidates = vectors[[r for r, _ in rows], [s for _, s in rows]]
        return (*vector_ranks(vectors[:, 0], candidates, relevant), texts)

    def baselines(self, train, dev):
        texts, _, relevant = candidate_texts(dev.examples)
        anchors = [e["texts"][0] for e in dev.examples]
        return {
            "random": random_baseline(len(texts)),
            "tfidf": tfidf_baseline(anchors, texts, relevant),
        }

    def text_model(self, model, tokenizer, best=None):
        from albert_keras.models import AlbertEmbeddingTextModel

        return AlbertEmbeddingTextModel(
            model,
            tokenizer,
            self.config.sequence_length,
            pooling=self.config.pooling,
            normalize=True,
            dynamic_length=True,
        )

    def write_predictions(self, model, data, dataset, output, record):
        """A line per record: where its positive ranks among the file's
        candidates, its similarity, and the best match's text and similarity."""
        from albert_keras.tasks.prediction_table import write_prediction_lines

        ranks, best, own, top, texts = self._ranked(model, data, dataset)
        lines = [
            {
                "line": example["line"],
                "rank": int(rank),
                "similarity": round(float(o), 6),
                "best_match": texts[int(b)],
                "best_similarity": round(float(t), 6),
            }
            for example, rank, b, o, t in zip(
                data.examples, ranks, best, own, top, strict=True
            )
        ]
        write_prediction_lines(output, lines)
        return {"metrics": rank_scores(ranks)}


def _find_fields(records, report) -> tuple:
    """The (anchor, positive[, "negative"]) keys of the first record with known ones."""
    for _, record in records:
        for pair in PAIR_KEYS:
            if all(key in record for key in pair):
                return pair + (("negative",) if "negative" in record else ())
    wanted = " / ".join(" + ".join(p) for p in PAIR_KEYS)
    raise ValueError(
        f"No record of {report.path!r} has the text fields looked for ({wanted}); "
        f"its records have the fields {', '.join(report.fields) or 'none'}. "
        f"{_FIELD_FLAGS} (text_fields=(...) in Python)."
    )
