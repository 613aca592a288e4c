"""`albert-keras predict`: a fine-tuned model on a task file -> predictions, metrics."""

from __future__ import annotations

from albert_keras.cli_help import DefaultsHelpFormatter, probability_or_auto
from albert_keras.training.score_text import score_text


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "predict",
        formatter_class=DefaultsHelpFormatter,
        help="predict a task file with a fine-tuned model (scored where labelled)",
        description=(
            "Run the best.keras of `albert-keras finetune` on a task file (e.g. a "
            "test split) with the run's own preprocessing: its task, label set, "
            "sequence length, vocabulary, SQuAD windows and the no-answer "
            "threshold chosen on dev (settings.json and metrics.json beside the "
            "model). "
            "Writes one prediction per record (SQuAD: question id -> answer and "
            "the no-answer odds, the official evaluation's formats; embed: the "
            "rank of each anchor's positive among the file's texts) and, where "
            "the file has labels or answers, the task's metrics."
        ),
    )
    parser.add_argument(
        "--model",
        required=True,
        help="the --output-dir of `albert-keras finetune`, or a fine-tuned .keras",
    )
    parser.add_argument(
        "--input",
        required=True,
        help="file to predict on, as the task reads it (.jsonl, .csv, .tsv; "
        "SQuAD JSON; CoNLL for tag); labels, when present, are scored",
    )
    parser.add_argument(
        "--output",
        help="predictions file: .jsonl, or a .csv / .tsv table (not for tag and "
        "squad) (default: predictions-<input name>.jsonl beside the model; .json "
        "for SQuAD)",
    )
    parser.add_argument("--vocab", help="default: the one beside the model")
    parser.add_argument(
        "--max-seq-length", type=int, help="default: the fine-tuning run's"
    )
    parser.add_argument("--batch-size", type=int, help="default: the fine-tuning run's")
    parser.add_argument(
        "--null-threshold",
        type=float,
        help="SQuAD: answer '' above these no-answer odds (default: the run's "
        "best_f1_thresh on dev)",
    )
    parser.add_argument(
        "--threshold",
        type=probability_or_auto,
        help="multilabel: predict the labels whose probability is above this "
        "(default: the run's, chosen on dev or given to finetune)",
    )
    parser.add_argument(
        "--max-examples", type=int, help="only a seeded draw of this many records"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the draw of --max-examples (default: 0)"
    )
    _add_field_arguments(parser)
    parser.set_defaults(run=run_predict)


# What `predict --X-field` maps to in the task's config.
FIELD_FLAGS = {
    "text_field": "classify/pair/regress/multilabel: the text; tag: the words; "
    "embed: the anchor",
    "text_pair_field": "pair: the second text; embed: the positive",
    "label_field": "the label; tag: the tags; multilabel: the labels, or "
    "their 0/1 columns a,b,c (optional: scored where present)",
    "context_field": "choice: the context",
    "question_field": "choice: the question",
    "options_field": "choice: the options (a list, or columns A,B,C)",
}


def _add_field_arguments(parser):
    fields = parser.add_argument_group(
        "fields",
        "which record key (CSV/TSV column) holds what, where the file names "
        "them otherwise than the training file (default: the run's)",
    )
    for dest, text in FIELD_FLAGS.items():
        fields.add_argument("--" + dest.replace("_", "-"), help=text)


def _fields(args):
    """{config field: key} of the field flags given."""
    from albert_keras.tasks.finetune_cli import text_fields_of

    texts = text_fields_of(args.text_field, args.text_pair_field)
    others = [k for k in FIELD_FLAGS if k not in ("text_field", "text_pair_field")]
    given = {k: getattr(args, k) for k in others if getattr(args, k)}
    if args.threshold is not None:  # a config field of multilabel runs
        given["threshold"] = args.threshold
    return {**given, **({"text_fields": texts} if texts else {})}


def run_predict(args):
    from albert_keras.tasks.prediction_run import run_prediction

    result = run_prediction(
        args.model,
        args.input,
        output=args.output,
        vocab=args.vocab,
        sequence_length=args.max_seq_length,
        batch_size=args.batch_size,
        null_threshold=args.null_threshold,
        max_examples=args.max_examples,
        seed=args.seed,
        fields=_fields(args),
    )
    print(predicted_line(result))
    squad = result["task"].get("class") == "SquadTask"
    for reason, count in result["data"].get("noted", {}).items():
        lines = result["data"].get("first_lines", {}).get(reason, [])
        print(note_line(reason, count, lines, result["examples"], squad))
    for text in result.get("warnings", []):
        print(f"Warning: {text}")
    if result["metrics"] is None:
        which = "of the run's label set " if result["warnings"] else ""
        print(f"No label {which}in the input: predictions only.")
    else:
        text = score_text(result["metrics"])
        scored = f" ({result['labelled']} scored)" if result["warnings"] else ""
        print(f"{result['task']['class']} metrics{scored}: {text}")
    return 0


def note_line(reason, count, lines, total, squad=False) -> str:
    """The `Note:` line `predict` prints for one reason noted in the data report.

    The cut length is named by the flag that sets it; SQuAD records are
    numbered by question (in file order), others by line.

    Args:
        reason: the report's reason, e.g. "cut to sequence_length=16".
        count: records noted for it.
        lines: their first line (or question) numbers.
        total: records predicted.
        squad: whether the records are SQuAD questions.

    Example:
    >>> note_line("cut to sequence_length=16", 2, [1, 2], 3)
    'Note: 2 of 3 records: cut to --max-seq-length 16 (lines 1, 2).'
    >>> note_line("context split into several windows", 9, [1, 2, 3, 5, 8], 9, True)
    ... # doctest: +ELLIPSIS
    'Note: 9 of 9 questions: context split ... (first questions 1, 2, 3, 5, 8).'
    """
    reason = reason.replace("cut to sequence_length=", "cut to --max-seq-length ")
    unit = "question" if squad else "line"
    shown = ", ".join(str(n) for n in lines[:5])
    if count == 1:
        where = f"{unit} {shown}"
    else:
        where = (
            f"{unit}s {shown}" if count <= len(lines[:5]) else f"first {unit}s {shown}"
        )
    records = "questions" if squad else "records"
    return f"Note: {count} of {total} {records}: {reason} ({where})."


def predicted_line(result) -> str:
    """The line `predict` prints on what it predicted and skipped.

    A SQuAD question with an empty question or context is skipped by the
    reader but, if drawn, answered "" (and counted among the predicted).

    Args:
        result: what `run_prediction` returns (`examples`, `data`,
            `predictions`, and for SQuAD `answered_empty`).

    Example:
    >>> data = {"skipped": {"empty context": 1}}
    >>> predicted_line({"examples": 3, "data": data, "predictions": "p.json",
    ...                 "answered_empty": 1})
    '3 predicted, 1 record skipped (empty context: 1), 1 of the 3 had no text to read: answered "" -> p.json'
    >>> predicted_line({"examples": 2, "data": {"skipped": {}}, "predictions": "p"})
    '2 predicted, none skipped -> p'
    """  # noqa: E501
    reasons = result["data"]["skipped"]
    skipped = sum(reasons.values())
    parts = [f"{result['examples']} predicted"]
    if skipped:
        listed = ", ".join(f"{reason}: {count}" for reason, count in reasons.items())
        plural = "" if skipped == 1 else "s"
        parts.append(f"{skipped} record{plural} skipped ({listed})")
    else:
        parts.append("none skipped")
    empty = result.get("answered_empty", 0)
    if empty:
        parts.append(
            f'{empty} of the {result["examples"]} had no text to read: answered ""'
        )
    return ", ".join(parts) + f" -> {result['predictions']}"
