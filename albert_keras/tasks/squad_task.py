"""`SquadTask`: extractive question answering (SQuAD v1.1 / v2.0 files)."""

from __future__ import annotations

import dataclasses
import json
import math
import os

import keras

from albert_keras.layers.squad_v2_head import check_beam
from albert_keras.models.albert_span_text_model import check_null_score
from albert_keras.tasks.squad_evaluation import finite_threshold
from albert_keras.tasks.squad_reader import answerable, read_squad_file
from albert_keras.tasks.task import Task
from albert_keras.tasks.task_data import TaskData

_KEPT_SCORES = ("exact", "f1", "best_exact", "best_f1", "best_f1_thresh")
_PREDICTION_SCORES = ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact")
# The no-answer odds of a question skipped for an empty question or context:
# above every other question's (the highest float32, strict JSON).
SKIPPED_ODDS = finite_threshold(math.inf)


@dataclasses.dataclass
class SquadConfig:
    """Settings of a `SquadTask` (the official `run_squad` flags).

    Args:
        sequence_length: window length.
        head: "v2", the official SQuAD 2.0 head (`AlbertSquadV2`: end
            conditioned on start, an answer-class logit, beam decoding), or
            "simple" start/end logits (`AlbertSpanQA`).
        doc_stride, max_query_length, max_answer_length: windows, question
            and answer limits in tokens.
        null_window_fraction: share of training windows without an answer
            kept (`keep_null_windows`); 1.0 keeps all.
        null_score: the no-answer score whose dev threshold is chosen:
            "official", or "span_adjusted" (the answer-class logit minus the
            best span's log probability; see `span_predictions`).
        start_n_top, end_n_top: the v2 head's beam.
    """

    sequence_length: int = 128
    head: str = "v2"
    doc_stride: int = 64
    max_query_length: int = 32
    max_answer_length: int = 30
    null_window_fraction: float = 1.0
    null_score: str = "official"
    start_n_top: int = 5
    end_n_top: int = 5

    def __post_init__(self):
        check_null_score(self.null_score)
        check_beam(self.start_n_top, self.end_n_top)
        if self.head not in ("v2", "simple"):
            raise ValueError(f"Unknown head {self.head!r}. Allowed: v2, simple")
        if self.max_answer_length < 1:
            # 0 decoded no span at all: every question "no answer".
            raise ValueError(
                "`max_answer_length` (--max-answer-length) is the longest "
                "answer predicted, in tokens: give 1 or more (30 is the "
                f"official). Received: max_answer_length={self.max_answer_length}"
            )
        room = self.sequence_length - 4  # [CLS], two [SEP], one context token
        if 0 < room < self.max_query_length:
            # Else refused by the packer once the data is read, in its terms.
            raise ValueError(
                f"A window of {self.sequence_length} tokens (--max-seq-length) "
                f"has room for a question of at most {room} tokens beside "
                f"[CLS], two [SEP] and the context; --max-query-length is "
                f"{self.max_query_length}. Lower --max-query-length to {room} "
                "or less (max_query_length=...), or raise --max-seq-length."
            )


class SquadTask(Task):
    """Extractive QA: answers are spans of the context, or "" (no answer).

    Files are SQuAD v1.1 / v2.0 JSON. Contexts are cut into overlapping
    windows (`squad_features`, the official `convert_examples_to_features`);
    the dev metric is the official evaluation's `best_f1` (F1 at the best
    no-answer threshold, which the exported model then applies); the
    baseline always answers "no answer".

    Example:
    >>> task = SquadTask(head="simple", sequence_length=64)
    >>> task.build_model  # doctest: +ELLIPSIS
    <bound method SquadTask.build_model of ...>
    """

    config_class = SquadConfig
    prediction_formats = ".json (the official answers file)"
    writes_tables = False
    no_held_out_dev = (
        "questions on one context would land on both sides; pass a dev file "
        "(--dev) of other contexts"
    )
    monitor = "best_f1"
    metric_names = ("best_f1", "best_exact", "f1", "exact")

    def read(self, source, training=False, require_labels=True):
        if not isinstance(source, str):
            raise ValueError("SquadTask reads SQuAD JSON files: pass a path.")
        examples, dataset, report = read_squad_file(source, training=training)
        return TaskData(examples, report, source=dataset)

    def dataset(self, data, tokenizer, batch_size, training=False, seed=0, epochs=None):
        from albert_keras.tasks.squad_features import squad_dataset

        if not answerable(data.examples):
            return None  # every question was skipped: all are answered ""
        return squad_dataset(
            self.windows(data, tokenizer, training, seed),
            batch_size,
            training=training,
            seed=seed,
            head=self.config.head,
            epochs=epochs,
        )

    def windows(self, data, tokenizer, training=False, seed=0) -> dict:
        """`data.features`: the windows of `data` (and `data.contexts`), made once.

        A resumed run batches its remaining epochs from the windows it counted
        its steps on (full SQuAD takes minutes to cut). They are made again
        only for other examples, tokenizer or settings.
        """
        from albert_keras.tasks.squad_features import keep_null_windows, squad_features

        c = self.config
        made_from = (data.examples, tokenizer, training, seed, dataclasses.astuple(c))
        # Tuples compare their items by identity first: the same examples
        # list is not walked.
        if data.features is not None and data.features_made_from == made_from:
            return data.features
        features, data.contexts = squad_features(
            answerable(data.examples),  # the skipped ones are answered ""
            tokenizer,
            sequence_length=c.sequence_length,
            doc_stride=c.doc_stride,
            max_query_length=c.max_query_length,
            report=data.report,
        )
        if training:
            windows = len(features["token_ids"])
            features = keep_null_windows(features, c.null_window_fraction, seed)
            if len(features["token_ids"]) < windows:
                print(
                    f"train: {len(features['token_ids'])} of {windows} windows "
                    f"kept (null windows kept with probability "
                    f"{c.null_window_fraction})",
                    flush=True,
                )
        data.features, data.features_made_from = features, made_from
        return features

    def build_model(self, backbone):
        from albert_keras.models import AlbertSpanQA, AlbertSquadV2

        if self.config.head == "simple":
            return AlbertSpanQA(backbone)
        return AlbertSquadV2(
            backbone,
            start_n_top=self.config.start_n_top,
            end_n_top=self.config.end_n_top,
        )

    def losses(self):
        from albert_keras.models import AlbertSquadV2

        if self.config.head == "simple":
            ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            losses = {"start_logits": ce, "end_logits": ce}
            return losses, {"start_logits": 0.5, "end_logits": 0.5}
        return AlbertSquadV2.official_losses()

    def answers(self, model, data, dataset):
        """(answers, null_odds) by question id: best spans, no-answer scores.

        Every question of `data.examples` (the drawn ones) is answered, in
        file order: those the reader marked `skipped` (an empty question or
        context) with "" at `SKIPPED_ODDS`, so that they are scored, as the
        official evaluation scores them, and ranked unanswerable.
        """
        from albert_keras.tasks.span_predictions import answers_by_id

        answers, odds, read = {}, {}, answerable(data.examples)
        if read:
            answers, odds = answers_by_id(
                read,
                data.features,
                data.contexts,
                model.predict(dataset, verbose=0),
                head=self.config.head,
                max_answer_length=self.config.max_answer_length,
                null_score=self.config.null_score,
            )
        ids = [e["id"] for e in data.examples]
        return (
            {q: answers.get(q, "") for q in ids},
            {q: odds.get(q, SKIPPED_ODDS) for q in ids},
        )

    def scores(self, model, data, dataset):
        from albert_keras.tasks.squad_evaluation import squad_evaluate

        self.dev_answers = self.answers(model, data, dataset)
        result = squad_evaluate(data.source, *self.dev_answers, 0.0)
        keep = _KEPT_SCORES + ("HasAns_f1", "NoAns_f1")
        return {k: result[k] for k in keep if k in result}

    def baselines(self, train, dev):
        from albert_keras.tasks.squad_evaluation import squad_evaluate

        result = squad_evaluate(dev.source, {e["id"]: "" for e in dev.examples})
        return {"always_no_answer": {"exact": result["exact"], "f1": result["f1"]}}

    def text_model(self, model, tokenizer, best=None, max_windows=None):
        """`model` answering raw questions on raw contexts (`AlbertSpanTextModel`).

        Args:
            best: the best epoch's dev scores: `best_f1_thresh` is the
                no-answer threshold (without them: always the best span).
            max_windows: windows served per question (the context is cut to
                them); default `AlbertSpanTextModel`'s.
        """
        from albert_keras.models import AlbertSpanTextModel

        c = self.config
        bound = {} if max_windows is None else {"max_windows": max_windows}
        return AlbertSpanTextModel(
            model,
            tokenizer,
            c.sequence_length,
            doc_stride=c.doc_stride,
            max_query_length=c.max_query_length,
            max_answer_length=c.max_answer_length,
            null_score=c.null_score,
            null_threshold=finite_threshold(
                (best or {}).get("best_f1_thresh", math.inf)
            ),
            **bound,
        )

    def write_dev_outputs(self, model, data, dataset, output_dir):
        """`dev_predictions.json` and `dev_null_odds.json` of the best model
        (the official evaluation script's prediction and `--na-prob-file`)."""
        answers, odds = self.answers(model, data, dataset)
        _write_json(os.path.join(output_dir, "dev_predictions.json"), answers)
        _write_json(os.path.join(output_dir, "dev_null_odds.json"), odds)

    def write_predictions(self, model, data, dataset, output, record):
        best_spans, odds = self.answers(model, data, dataset)
        threshold = record["null_threshold"]
        answers = {q: "" if odds[q] > threshold else t for q, t in best_spans.items()}
        _write_json(output, answers)
        odds_path = _odds_path(output)
        _write_json(odds_path, odds)
        metrics, labelled = None, 0
        if _has_gold(data.source):
            metrics = _prediction_metrics(data.source, best_spans, odds, threshold)
            labelled = len(best_spans)  # every question of a gold file is scored
        return {"null_odds": odds_path, "metrics": metrics, "labelled": labelled}


def _write_json(path, value):
    from albert_keras.atomic_files import atomic_write

    with atomic_write(path) as f:
        json.dump(value, f, indent=1, ensure_ascii=False)


def _odds_path(output):
    folder, name = os.path.split(output)
    path = os.path.join(folder, name.replace("predictions", "null_odds", 1))
    return path if path != output else os.path.splitext(output)[0] + ".null_odds.json"


def _has_gold(dataset):
    """Whether a SQuAD `data` list says what the answers are (a dev/test file)."""
    return any(
        "answers" in qa or "is_impossible" in qa
        for article in dataset
        for paragraph in article.get("paragraphs", [])
        for qa in paragraph.get("qas", [])
    )


def _prediction_metrics(dataset, best_spans, odds, threshold):
    """The scores at the dev threshold; best_* are this file's own best
    thresholds (an upper bound, not a fair test score)."""
    from albert_keras.tasks.squad_evaluation import squad_evaluate

    result = squad_evaluate(dataset, best_spans, odds, threshold)
    metrics = {k: result[k] for k in _PREDICTION_SCORES + ("NoAns_f1",) if k in result}
    metrics["null_threshold"] = finite_threshold(threshold)  # strict JSON
    metrics["oracle_best_f1"] = result["best_f1"]
    metrics["oracle_best_f1_thresh"] = result["best_f1_thresh"]
    metrics["always_no_answer_f1"] = squad_evaluate(
        dataset, dict.fromkeys(best_spans, "")
    )["f1"]
    return metrics
