"""`run_prediction`: a fine-tuned model on a task file -> predictions (and metrics).

What `albert-keras predict` runs. The model is the `best.keras` of
`albert-keras finetune` (or that run's folder); the `settings.json` beside
it holds the task's config (label set, text fields, sequence length, SQuAD
windows) and `metrics.json` the no-answer threshold chosen on dev, so new
inputs are read, packed and decoded exactly as the dev set was. Records
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
import zipfile

from albert_keras.atomic_files import write_json
from albert_keras.tasks.task import Task
from albert_keras.tasks.task_names import task_from_name

# The task of a model saved without a run folder beside it.
_MODEL_TASKS = {
    "AlbertSquadV2": ("squad", {"head": "v2"}),
    "AlbertSpanQA": ("squad", {"head": "simple"}),
    "AlbertMultipleChoice": ("choice", {}),
    "AlbertClassifier": ("classify", {}),
    "AlbertTokenClassifier": ("tag", {}),
    "AlbertBiEncoder": ("embed", {}),
}


def fine_tuned_model_path(model: str) -> str:
    """The .keras file a `--model` flag names: a file, or a run's best.keras.

    Args:
        model: a `.keras` file, or the output folder of `albert-keras finetune`.

    Raises:
        FileNotFoundError: naming what was given and what is accepted.
    """
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
    if not zipfile.is_zipfile(model):
        raise ValueError(
            f"{model!r} is not a .keras file (those are zip archives): pass the "
            "best.keras of `albert-keras finetune` or its output folder."
        )
    return model


def check_request(sequence_length, batch_size, max_examples, output) -> None:
    """ValueError naming the flag where a number or `output` cannot work."""
    numbers = {
        "--max-seq-length": sequence_length,
        "--batch-size": batch_size,
        "--max-examples": max_examples,
    }
    for flag, value in numbers.items():
        if value is not None and value < 1:
            raise ValueError(
                f"{flag} {value}: give a positive number, or leave it out."
            )
    if output is None:
        return
    if output.endswith(("/", os.sep)) and not os.path.isdir(output):
        raise ValueError(
            f"--output {output!r} names a folder (it ends with a slash); give a "
            f"file name, e.g. {os.path.join(output, 'predictions.jsonl')!r}, in "
            "an existing folder."
        )
    if os.path.isdir(output):
        raise ValueError(
            f"--output {output!r} is a folder; give a file name, e.g. "
            f"{os.path.join(output, 'predictions.jsonl')!r}."
        )
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise ValueError(
            f"--output {output!r}: its folder {folder!r} is not an existing "
            "folder; create it or give another --output."
        )


def _check_table_output(task, output) -> None:
    """A .csv / .tsv --output only for the tasks with one prediction a row."""
    from albert_keras.tasks.prediction_table import TABLE_SUFFIXES

    if output and output.endswith(TABLE_SUFFIXES) and not task.writes_tables:
        raise ValueError(
            f"--output {output!r}: a {type(task).__name__} writes no table (its "
            f"predictions are {task.prediction_formats}); name a file of that kind."
        )


def check_output_is_not_input(input, output) -> None:
    """ValueError where `--output` (or the `.metrics.json` written beside it)
    is the `--input` file: writing it would replace the data predicted.

    Args:
        input: the task file predicted.
        output: the predictions file asked for (None: the default, beside
            the model, never the input).

    Example:
    >>> check_output_is_not_input("test.jsonl", "predictions.jsonl")
    """
    if output is None:
        return
    written = (output, os.path.splitext(output)[0] + ".metrics.json")
    if any(os.path.realpath(path) == os.path.realpath(input) for path in written):
        raise ValueError(
            f"--output {output!r} would overwrite the --input file {input!r} "
            "(the predictions, or the .metrics.json beside them): give another "
            "--output, or leave it out for predictions-<input name> beside the "
            "model."
        )


def _read_json(folder, name):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _task_of(model, settings, sequence_length, fields):
    """The run's task (settings.json), or one made from the model's class,
    with the `fields` and `sequence_length` given (those not None)."""
    if settings.get("task"):
        task = Task.from_config(settings["task"])
    else:
        name = type(model).__name__
        if name not in _MODEL_TASKS:
            raise ValueError(
                f"{name} is not a fine-tuned task model ({', '.join(_MODEL_TASKS)})."
            )
        task_name, made = _MODEL_TASKS[name]
        if name == "AlbertClassifier" and model.multi_label:  # logit i: label i
            task_name = "multilabel"
            made = {"labels": list(range(model.num_classes))}
        elif name == "AlbertClassifier":
            made = {"num_classes": model.num_classes, "pairs": None}
            if model.num_classes > 1:  # class i is label i
                made["labels"] = list(range(model.num_classes))
        elif name == "AlbertMultipleChoice":
            made = {"num_choices": model.num_choices}
        elif name == "AlbertTokenClassifier":  # tag i is class i
            made = {"labels": list(range(model.num_classes))}
        elif name == "AlbertBiEncoder":
            made = {"pooling": model.pooling}
        task = task_from_name(task_name, **made)
    if sequence_length:
        fields = {**fields, "sequence_length": sequence_length}
    fields = task.config_fields(fields)
    unknown = sorted(set(fields) - set(vars(task.config)))
    if unknown:
        flags = ", ".join(_flag(k) for k in unknown)
        keys = [k for k in vars(task.config) if k.endswith(("_field", "_fields"))]
        known = [_flag(k) for k in keys]
        raise ValueError(
            f"{flags} does not apply to a {type(task).__name__} model; it takes "
            f"{', '.join(known) or 'no field flags (its format has fixed keys)'}."
        )
    if "text_fields" in fields:
        _check_text_count(task, fields["text_fields"])
    task.config = type(task.config)(**{**vars(task.config), **fields})
    return task


def _flag(field):
    return "--text-field" if field == "text_fields" else "--" + field.replace("_", "-")


def _check_text_count(task, given):
    trained = task.config.text_fields
    if trained and len(given) != len(trained):
        raise ValueError(
            f"The model was trained on {len(trained)} text(s) per example "
            f"({', '.join(trained)}); --text-field / --text-pair-field name "
            f"{len(given)}."
        )


def _check_length(model, task):
    length = task.config.sequence_length
    max_position = model.backbone.config.max_position_embeddings
    if length > max_position:
        raise ValueError(
            f"--max-seq-length {length} (sequence_length) exceeds the model's "
            f"max_position_embeddings={max_position}: pass {max_position} or less."
        )


def _check_vocabulary(model, tokenizer, vocab):
    """A vocabulary larger than the model's embedding table is another
    model's: its ids would be wrong, or out of the table."""
    size, embedded = tokenizer.vocabulary_size(), model.backbone.config.vocab_size
    if size > embedded:
        given = f"--vocab {vocab}" if vocab else "the vocabulary beside the model"
        raise ValueError(
            f"{given} has {size} tokens but the model embeds {embedded}: it is "
            "not the model's vocabulary. Pass the run's own with --vocab (the "
            "file settings.json names), or leave --vocab out."
        )


def run_prediction(
    model,
    input,
    output=None,
    vocab=None,
    sequence_length=None,
    batch_size=None,
    null_threshold=None,
    max_examples=None,
    seed=0,
    fields=None,
):
    """Predicts every record of a task file; scores them where labels are there.

    Args:
        model: the output folder of `albert-keras finetune` or a fine-tuned
            `.keras` file.
        input: a task file in the training format (JSON Lines; SQuAD JSON);
            `label` / `answers` may be missing.
        output: where the predictions go. Default: beside the model,
            `predictions-<input name>.jsonl` (one line per kept record:
            `line`, and `label` + `probabilities`, or `prediction` for
            regression) or, for SQuAD, `predictions-<input name>.json`
            (question id -> answer, "" for no answer) with
            `null_odds-<input name>.json` beside it.
        vocab: the tokenizer's vocabulary; default: the one beside the model.
        sequence_length, batch_size: default: the fine-tuning run's.
        null_threshold: SQuAD: answer "" where the no-answer odds are above
            it; default: the `best_f1_thresh` chosen on dev.
        max_examples, seed: predict a seeded draw of this many records only
            (the draw of `albert-keras finetune --max-dev-examples`).
        fields: record keys where `input` names them otherwise than the
            training file: {config field: key}, e.g. `{"text_fields":
            ("review",), "label_field": "stars"}` (`context_field`, ... for
            choice).

    Returns:
        dict with `task`, `predictions` (the file written), `examples`,
        `labelled` (the examples scored), `data` (the reading report),
        `metrics` (of the labelled examples; None without any) and
        `warnings` (labels outside the run's label set: predicted, not
        scored); also written as JSON beside the predictions
        (`*.metrics.json`).
    """
    import keras

    import albert_keras  # noqa: F401  (registers the classes)
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.backbone_loader import find_vocabulary
    from checkpoints_convert.hf_labels import settings_beside

    check_request(sequence_length, batch_size, max_examples, output)
    check_output_is_not_input(input, output)
    path = fine_tuned_model_path(model)
    folder = os.path.dirname(path) or "."
    settings, record = settings_beside(path) or {}, _read_json(folder, "metrics.json")
    loaded = keras.saving.load_model(path, compile=False)
    task = _task_of(loaded, settings, sequence_length, fields or {})
    _check_length(loaded, task)
    _check_table_output(task, output)
    is_squad = type(task).__name__ == "SquadTask"
    if null_threshold is not None and not is_squad:
        raise ValueError(
            f"--null-threshold applies to SQuAD runs (no-answer odds); this "
            f"model is a {type(task).__name__}: leave it out."
        )
    if vocab is None and settings.get("vocab"):
        beside = os.path.join(folder, settings["vocab"])
        vocab = beside if os.path.isfile(beside) else None
    tokenizer = load_tokenizer(find_vocabulary(path, vocab))
    _check_vocabulary(loaded, tokenizer, vocab)
    if null_threshold is None:
        null_threshold = record.get("best", {}).get("best_f1_thresh", math.inf)
    task.result = record  # the run's metrics.json: what it chose on dev
    data = task.read(input, require_labels=False).subset(max_examples, seed)
    batches = task.dataset(
        data, tokenizer, batch_size or settings.get("batch_size", 32)
    )
    stem = os.path.splitext(os.path.basename(input))[0]
    suffix = ".json" if is_squad else ".jsonl"
    output = output or os.path.join(folder, f"predictions-{stem}{suffix}")
    written = task.write_predictions(
        loaded, data, batches, output, {"null_threshold": null_threshold}
    )
    result = {
        "task": task.get_config(),
        "model": path,
        "input": input,
        "predictions": output,
        "examples": len(data.examples),
        # SQuAD questions with no text to read, drawn: answered "".
        "answered_empty": sum("skipped" in e for e in data.examples),
        "labelled": sum(e.get("label") is not None for e in data.examples),
        **written,
        "warnings": unscored_warnings(task, data),
        "data": data.report.to_dict(),
    }
    write_json(os.path.splitext(output)[0] + ".metrics.json", result, default=float)
    return result


def unscored_warnings(task, data) -> list[str]:
    """The records predicted but not scored: their label is not the run's.

    Args:
        task: the run's task (its config names the label set).
        data: the `TaskData` predicted (classification keeps such records
            with `label` None and the label they had as `unscored_label`).

    Example:
    >>> from albert_keras.tasks import ClassificationTask
    >>> task = ClassificationTask(labels=["neg", "pos"], text_fields=("text",))
    >>> data = task.read([{"text": "fine", "label": 1}], require_labels=False)
    >>> unscored_warnings(task, data)[0][:60]
    "1 of 1 records have a label outside the run's label set ['ne"
    """
    given = [e["unscored_label"] for e in data.examples if "unscored_label" in e]
    if not given:
        return []
    found = sorted({repr(label) for label in given})
    shown = ", ".join(found[:10]) + (", ..." if len(found) > 10 else "")
    return [
        f"{len(given)} of {len(data.examples)} records have a label outside the "
        f"run's label set {task.config.labels} (found: {shown}): they are "
        "predicted but not scored. To score them, write their labels as the "
        "run's."
    ]
