"""`run_prediction`: a fine-tuned model on a task file -> predictions (and metrics).

What `albert-keras predict` runs. The model is the `best.keras` of
`albert-keras finetune` (or that run's folder); the `metrics.json` beside it
says how training prepared its inputs (task, label set, sequence length,
vocabulary, SQuAD windows and the no-answer threshold chosen on dev), so new
inputs are tokenized, packed and decoded exactly as the dev set was. Records
without a label are predicted; where the file has labels (a test split), the
task's metrics are computed too.

>>> result = run_prediction(  # doctest: +SKIP
...     "runs/rt", "tasks/rt_sentiment/test.jsonl")
>>> result["metrics"]["accuracy"]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from albert_keras.tasks.finetune_run import _plain, _subset, find_vocabulary
from albert_keras.tasks.task_reader import TASKS

_MODEL_TASKS = {
    "AlbertSquadV2": ("squad", "v2"),
    "AlbertSpanQA": ("squad", "simple"),
    "AlbertMultipleChoice": ("choice", None),
}


def _model_path(model):
    if os.path.isdir(model):
        path = os.path.join(model, "best.keras")
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{model!r} has no best.keras: pass the output folder of "
                "`albert-keras finetune` or a fine-tuned .keras file."
            )
        return path
    if not model.endswith(".keras") or not os.path.isfile(model):
        raise FileNotFoundError(
            f"--model {model!r} is neither a .keras file nor a folder with "
            "best.keras (the output folder of `albert-keras finetune`)."
        )
    return model


def _run_record(path):
    """The `metrics.json` of the fine-tuning run beside `path`, or {}."""
    record = os.path.join(os.path.dirname(path) or ".", "metrics.json")
    if not os.path.isfile(record):
        return {}
    with open(record) as f:
        return json.load(f)


def _task_of(model, task, record):
    """The task (and SQuAD head) of a loaded model, checked against `task`."""
    name = type(model).__name__
    if name in _MODEL_TASKS:
        found, head = _MODEL_TASKS[name]
    elif name == "AlbertClassifier":
        found = "regress" if model.num_classes == 1 else record.get("task")
        head = None
        if found not in ("classify", "pair", "regress"):
            found = None
    else:
        raise ValueError(
            f"{name} is not a fine-tuned task model (AlbertClassifier, "
            "AlbertMultipleChoice, AlbertSpanQA, AlbertSquadV2)."
        )
    if task and found and task != found and {task, found} != {"classify", "pair"}:
        raise ValueError(
            f"--task {task} does not fit the model, an {name} (task {found})."
        )
    task = task or found
    if task is None:
        raise ValueError(
            f"Which task is this {name} for? No metrics.json beside the model "
            "says it: pass --task classify or --task pair."
        )
    if task not in TASKS:
        raise ValueError(f"Unknown task {task!r}. Allowed: {', '.join(TASKS)}")
    return task, head


def run_prediction(
    model,
    input,
    output=None,
    task=None,
    vocab=None,
    sequence_length=None,
    batch_size=None,
    null_threshold=None,
    max_examples=None,
    seed=0,
    verbose=1,
):
    """Predicts every record of a task file; scores them where labels are there.

    Args:
        model: the output folder of `albert-keras finetune` or a fine-tuned
            `.keras` file (`AlbertClassifier`, `AlbertMultipleChoice`,
            `AlbertSpanQA`, `AlbertSquadV2`).
        input: a task file in the training format (JSON Lines; SQuAD JSON for
            "squad"); `label` / `answers` may be missing.
        output: where the predictions go. Default: beside the model,
            `predictions-<input name>.jsonl` (one line per kept record:
            `line`, and `label` + `probabilities`, or `prediction` for
            regression) or, for SQuAD, `predictions-<input name>.json`
            (question id -> answer, "" for no answer) with
            `null_odds-<input name>.json` beside it.
        task: the task; default: the fine-tuning run's (`metrics.json`) or
            the model's kind.
        vocab: the tokenizer's vocabulary; default: the one beside the model.
        sequence_length, batch_size: default: the fine-tuning run's (128, 32
            without a `metrics.json`).
        null_threshold: SQuAD: answer "" where the no-answer odds are above
            it; default: the `best_f1_thresh` chosen on dev (always answer
            without one).
        max_examples, seed: predict a seeded draw of this many records only
            (the draw of `albert-keras finetune --max-dev-examples`).
        verbose: progress bar.

    Returns:
        dict with `task`, `predictions` (the file written), `examples`,
        `data` (the reading report), `metrics` (None without labels) and
        `settings`; also written as JSON beside the predictions
        (`*.metrics.json`).
    """
    import keras

    import albert_keras.models  # noqa: F401  (registers the classes)
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer

    path = _model_path(model)
    record = _run_record(path)
    settings = dict(record.get("settings", {}))
    loaded = keras.saving.load_model(path, compile=False)
    task, head = _task_of(loaded, task, record)
    if task == "squad":
        settings.setdefault("head", head)
    length = sequence_length or settings.get("sequence_length", 128)
    batch_size = batch_size or settings.get("batch_size", 32)
    settings.update(sequence_length=length, batch_size=batch_size)
    max_position = loaded.backbone.config.max_position_embeddings
    if length > max_position:
        raise ValueError(
            f"sequence_length={length} exceeds the model's "
            f"max_position_embeddings={max_position}: pass a smaller "
            "--max-seq-length."
        )
    if vocab is None and settings.get("vocab"):
        beside = os.path.join(os.path.dirname(path), settings["vocab"])
        vocab = beside if os.path.isfile(beside) else None
    vocab = find_vocabulary(path, vocab)
    tokenizer = load_tokenizer(vocab)
    stem = os.path.splitext(os.path.basename(input))[0]
    folder = os.path.dirname(path) or "."
    if task == "squad":
        if null_threshold is None:
            null_threshold = record.get("best", {}).get("best_f1_thresh", math.inf)
        settings["null_threshold"] = null_threshold
        output = output or os.path.join(folder, f"predictions-{stem}.json")
        result = _predict_squad(
            loaded, input, output, tokenizer, settings, max_examples, seed, verbose
        )
    else:
        output = output or os.path.join(folder, f"predictions-{stem}.jsonl")
        result = _predict_texts(
            loaded,
            task,
            input,
            output,
            tokenizer,
            record.get("labels"),
            settings,
            max_examples,
            seed,
            verbose,
        )
    result = {
        "task": task,
        "model": path,
        "input": input,
        "predictions": output,
        **result,
        "settings": dict(settings, vocab=vocab),
    }
    with open(os.path.splitext(output)[0] + ".metrics.json", "w") as f:
        json.dump(result, f, indent=2, default=_plain)
    return result


def _predict_texts(
    model, task, path, output, tokenizer, labels, settings, max_examples, seed, verbose
):
    from albert_keras.tasks import task_datasets
    from albert_keras.tasks.dev_evaluation import task_scores
    from albert_keras.tasks.task_reader import read_task_file

    length, batch = settings["sequence_length"], settings["batch_size"]
    kwargs = {}
    if task == "choice":
        kwargs["num_choices"] = model.num_choices
    elif task in ("classify", "pair"):
        # Class i is the run's i-th label; without a run record, labels are
        # the class indices themselves.
        labels = labels or list(range(model.num_classes))
        if len(labels) != model.num_classes:
            raise ValueError(
                f"metrics.json names {len(labels)} labels but the model has "
                f"{model.num_classes} classes."
            )
        kwargs["label_names"] = labels
    examples, _, report = read_task_file(path, task, require_labels=False, **kwargs)
    examples = _subset(examples, max_examples, seed)
    known = [e["label"] is not None for e in examples]
    # The pipelines carry a label per example: a stand-in where there is none.
    filled = [dict(e, label=0 if e["label"] is None else e["label"]) for e in examples]
    if task == "choice":
        data = task_datasets.choice_dataset(
            filled, tokenizer, length, batch, report=report
        )
    else:
        data = task_datasets.text_dataset(
            filled,
            tokenizer,
            length,
            batch,
            report=report,
            regression=task == "regress",
        )
    logits = np.asarray(model.predict(data, verbose=verbose)["logits"], "float64")
    with open(output, "w", encoding="utf-8") as f:
        for example, row in zip(examples, logits, strict=True):
            line = {"line": example["line"]}
            if task == "regress":
                line["prediction"] = float(row[0])
            else:
                probabilities = np.exp(row - row.max())
                probabilities /= probabilities.sum()
                best = int(np.argmax(row))
                if task == "choice":
                    line["label"] = best
                    line["probabilities"] = [round(float(p), 6) for p in probabilities]
                else:
                    line["label"] = labels[best]
                    line["probabilities"] = {
                        str(name): round(float(p), 6)
                        for name, p in zip(labels, probabilities, strict=True)
                    }
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    metrics = None
    if all(known):
        metrics = task_scores(task, np.asarray([e["label"] for e in examples]), logits)
    return {
        "examples": len(examples),
        "labelled": int(sum(known)),
        "metrics": metrics,
        "data": report.to_dict(),
    }


def _has_gold(dataset):
    """Whether a SQuAD `data` list says what the answers are (a dev/test file)."""
    return any(
        "answers" in qa or "is_impossible" in qa
        for article in dataset
        for paragraph in article.get("paragraphs", [])
        for qa in paragraph.get("qas", [])
    )


def _predict_squad(
    model, path, output, tokenizer, settings, max_examples, seed, verbose
):
    from albert_keras.tasks.span_predictions import answers_by_id
    from albert_keras.tasks.squad_evaluation import squad_evaluate
    from albert_keras.tasks.squad_features import squad_dataset, squad_features
    from albert_keras.tasks.task_reader import read_squad_file

    examples, dataset, report = read_squad_file(path, training=False)
    examples = _subset(examples, max_examples, seed)
    features, contexts = squad_features(
        examples,
        tokenizer,
        sequence_length=settings["sequence_length"],
        doc_stride=settings.get("doc_stride", 64),
        max_query_length=settings.get("max_query_length", 32),
        report=report,
    )
    head = settings["head"]
    data = squad_dataset(features, settings["batch_size"], head=head)
    best_spans, odds = answers_by_id(
        examples,
        features,
        contexts,
        model.predict(data, verbose=verbose),
        head=head,
        max_answer_length=settings.get("max_answer_length", 30),
        null_score=settings.get("null_score", "official"),
    )
    threshold = settings["null_threshold"]
    answers = {
        q: ("" if odds[q] > threshold else text) for q, text in best_spans.items()
    }
    with open(output, "w", encoding="utf-8") as f:
        json.dump(answers, f, indent=1, ensure_ascii=False)
    odds_path = os.path.join(
        os.path.dirname(output) or ".",
        os.path.basename(output).replace("predictions", "null_odds", 1),
    )
    if odds_path == output:
        odds_path = os.path.splitext(output)[0] + ".null_odds.json"
    with open(odds_path, "w") as f:
        json.dump(odds, f, indent=1)
    metrics = None
    if _has_gold(dataset):
        # The threshold chosen on dev, applied; best_* are this file's own
        # best thresholds (an upper bound, not a fair test score).
        result = squad_evaluate(dataset, best_spans, odds, threshold)
        keep = ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "NoAns_f1")
        metrics = {k: result[k] for k in keep if k in result}
        metrics["null_threshold"] = threshold
        metrics["oracle_best_f1"] = result["best_f1"]
        metrics["oracle_best_f1_thresh"] = result["best_f1_thresh"]
        no_answer = squad_evaluate(dataset, dict.fromkeys(best_spans, ""))
        metrics["always_no_answer_f1"] = no_answer["f1"]
    return {
        "examples": len(examples),
        "null_odds": odds_path,
        "metrics": metrics,
        "data": report.to_dict(),
    }
