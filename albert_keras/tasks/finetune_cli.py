"""`albert-keras finetune`: one task from JSON Lines / SQuAD files to dev metrics."""

from __future__ import annotations

from albert_keras.cli_help import DefaultsHelpFormatter
from albert_keras.tasks.finetune_arguments import (
    add_embed_arguments,
    add_field_arguments,
    add_multilabel_arguments,
    add_run_arguments,
    add_squad_arguments,
    add_training_arguments,
)
from albert_keras.training.score_text import score_text

TASKS = ("classify", "pair", "regress", "multilabel", "choice", "squad", "tag", "embed")


def add_parser(subparsers):
    from albert_keras.tasks.finetuning_options import DEFAULT_INIT

    parser = subparsers.add_parser(
        "finetune",
        formatter_class=DefaultsHelpFormatter,
        help="fine-tune on a task (classify, pair, regress, multilabel, choice, "
        "squad, tag, embed)",
        description=(
            "Fine-tune ALBERT with AdamW (linear warmup and decay), evaluating "
            "the task metric on --dev after every epoch; the best epoch is kept "
            "(best.keras) and training stops early when dev stops improving. "
            "Reads JSON Lines, CSV or TSV (with a header row), or a JSON "
            "array of objects. Writes "
            "metrics.json, curves.png, history.csv, TensorBoard logs and "
            "savedmodel/ (raw text in); a killed run resumes from its last "
            "epoch when started again."
        ),
    )
    parser.add_argument(
        "--task",
        required=True,
        choices=TASKS,
        help="classify: one text -> a class; pair: two texts -> a class; "
        "regress: one text or a pair -> a number; multilabel: one text or a "
        "pair -> any number of labels; choice: a context and N "
        "options -> the right option; squad: SQuAD JSON, answer spans; tag: "
        "words -> a tag each (NER, POS); embed: (anchor, positive) pairs -> "
        "sentence embeddings for search",
    )
    parser.add_argument(
        "--train",
        required=True,
        help="training file (.jsonl, .csv or .tsv; tag: also CoNLL .conll / .iob)",
    )
    parser.add_argument(
        "--dev",
        help="dev file: the best epoch is chosen on it (or --dev-fraction)",
    )
    parser.add_argument(
        "--dev-fraction",
        type=float,
        metavar="F",
        help="no dev file: hold out this share of --train as the dev set, each "
        "class in proportion, the same examples whatever --seed (not for squad)",
    )
    parser.add_argument(
        "--init",
        default=DEFAULT_INIT,
        help="the model to start from: the output folder of `albert-keras "
        "pretrain` (by default it writes runs/pretrain), a .keras file, an "
        "official release (folder, .tar.gz) or TF Hub module, a transformers "
        "ALBERT folder, a release's name (albert_base_v2, ...: its weights "
        "converted into $ALBERT_KERAS_HOME), or albert_small or albert_tiny: "
        "random weights",
    )
    parser.add_argument(
        "--vocab",
        help="SentencePiece model or vocab.txt (default: the one beside --init, or "
        "the embedded one for albert_small / albert_tiny)",
    )
    parser.add_argument(
        "--output-dir",
        default="runs/finetune",
        help="where the run writes best.keras, metrics.json, savedmodel/, ...",
    )
    add_field_arguments(parser)
    add_training_arguments(parser)
    add_squad_arguments(parser)
    add_multilabel_arguments(parser)
    add_embed_arguments(parser)
    add_run_arguments(parser)
    parser.set_defaults(run=run_finetune)


def _task(args):
    """The task class `--task` names, configured from the flags."""
    from albert_keras.tasks import task_from_name

    _check_unused_flags(args)
    fields = {"sequence_length": args.max_seq_length}
    labels = [_label(v) for v in args.labels.split(",")] if args.labels else None
    if args.task == "squad":
        fields.update(
            head=args.head,
            doc_stride=args.doc_stride,
            max_query_length=args.max_query_length,
            max_answer_length=args.max_answer_length,
            null_window_fraction=args.null_window_fraction,
            null_score=args.null_score,
        )
    elif args.task == "choice":
        fields.update(
            context_field=args.context_field,
            question_field=args.question_field,
            options_field=args.options_field,
            label_field=args.label_field or "label",
        )
    elif args.task == "tag":
        fields.update(words_field=args.text_field, tags_field=args.label_field)
        if labels:
            fields["labels"] = labels
    elif args.task == "embed":
        fields.update(_embed_fields(args))
    elif args.task == "multilabel":
        fields.update(label_fields=args.label_field or (), threshold=args.threshold)
        fields.update({"text_fields": _text_fields(args)} if args.text_field else {})
        if labels:
            fields["labels"] = labels
    else:
        fields["label_field"] = args.label_field or "label"
        text_fields = _text_fields(args)
        if text_fields:
            fields["text_fields"] = text_fields
        if labels and args.task != "regress":
            fields["labels"] = labels
        if args.class_weight:
            fields["class_weight"] = _class_weight(args.class_weight)
    if args.label_smoothing:  # a task without classes refused it above
        fields["label_smoothing"] = args.label_smoothing
    return task_from_name(args.task, **fields)


def _embed_fields(args):
    """The `SentenceEmbeddingConfig` fields of the embed flags."""
    fields = {"symmetric": args.symmetric}
    texts = text_fields_of(args.text_field, args.text_pair_field)
    if len(texts) == 1 or (args.negative_field and not texts):
        raise ValueError(
            "--task embed names its texts together: --text-field (the anchor) "
            "and --text-pair-field (its positive), then --negative-field if "
            "any; or none of them, to find anchor/positive, query/positive, "
            "sentence1/sentence2, ... in the file."
        )
    if texts:
        fields["text_fields"] = texts + tuple(filter(None, [args.negative_field]))
    if args.pooling:
        fields["pooling"] = args.pooling
    if args.scale is not None:
        fields["scale"] = args.scale
    return fields


def _class_weight(text):
    """--class-weight: "balanced", or the weights as numbers (a word that is
    neither is passed on, for the config to refuse by name)."""
    if text.strip() == "balanced":
        return "balanced"
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        return text


# The tasks of one text or a pair (--text-field, --text-pair-field).
_TEXT_TASKS = ("classify", "pair", "regress", "multilabel", "embed")
# The tasks whose head has dropout (embed has no head).
_HEADS = ("classify", "pair", "regress", "multilabel", "choice", "tag")
_SMOOTHED = ("classify", "pair", "choice", "tag")  # the tasks with classes


def _check_unused_flags(args):
    """Refuses flags the --task does not read (they were silently ignored)."""
    unused = [
        flag
        for flag, value, tasks in (
            ("--labels", args.labels, ("classify", "pair", "multilabel", "tag")),
            ("--text-field", args.text_field, (*_TEXT_TASKS, "tag")),
            ("--negative-field", args.negative_field, ("embed",)),
            ("--pooling", args.pooling, ("embed",)),
            ("--scale", args.scale is not None, ("embed",)),
            ("--symmetric", args.symmetric, ("embed",)),
            ("--text-pair-field", args.text_pair_field, _TEXT_TASKS),
            ("--threshold", args.threshold is not None, ("multilabel",)),
            ("--class-weight", args.class_weight, ("classify", "pair")),
            ("--label-smoothing", args.label_smoothing, _SMOOTHED),
            ("--classifier-dropout", args.classifier_dropout is not None, _HEADS),
        )
        if value and args.task not in tasks
    ]
    if unused:
        hint = _unused_hint(args.task, unused)
        raise ValueError(
            f"--task {args.task} does not read {' or '.join(unused)}: {hint}."
        )


_EMBED_FLAGS = {"--negative-field", "--pooling", "--scale", "--symmetric"}


def _unused_hint(task, unused):
    """What to do instead of the `unused` flags of `--task task`."""
    if set(unused) <= _EMBED_FLAGS:
        return "they shape the sentence embeddings of --task embed"
    if unused == ["--class-weight"]:
        return "--class-weight weighs the classes of --task classify or pair"
    if unused == ["--label-smoothing"]:
        return "--label-smoothing is for --task classify, pair, choice or tag"
    if unused == ["--classifier-dropout"]:
        if task == "embed":
            return "its model has no head, only the encoder; --dropout sets its dropout"
        return (
            "the SQuAD heads have no dropout (as the official ones); --dropout "
            "sets the encoder's"
        )
    if set(unused) == {"--class-weight", "--label-smoothing"}:
        return "they weigh or smooth the classes of --task classify or pair"
    hint = {
        "regress": "a regression target is a number, it has no label set",
        "choice": "name the fields with --context-field, --question-field, "
        "--options-field and --label-field",
        "squad": "SQuAD JSON names its own fields",
        "tag": "name the words with --text-field and the tags with --label-field",
        "embed": "it has no labels: name the texts with --text-field, "
        "--text-pair-field and --negative-field",
    }.get(task)
    if hint is None or unused == ["--threshold"]:
        return "--threshold sets where --task multilabel predicts a label"
    return hint


def _text_fields(args):
    """The text key(s) from --text-field / --text-pair-field (or --text-fields)."""
    if args.text_fields:
        return tuple(args.text_fields.split(","))
    fields = text_fields_of(args.text_field, args.text_pair_field)
    if len(fields) == 1 and args.task == "pair":
        raise ValueError(
            f"--task pair needs two texts: add --text-pair-field (the field "
            f"paired with {args.text_field!r}), or use --task classify."
        )
    return fields


def text_fields_of(text_field, text_pair_field) -> tuple:
    """`text_fields` of --text-field / --text-pair-field (`finetune`, `predict`):
    (), (text,) or (text, pair); a pair field alone is refused."""
    if text_pair_field and not text_field:
        raise ValueError(
            "--text-pair-field needs --text-field too (the first text of the pair)."
        )
    return tuple(f for f in (text_field, text_pair_field) if f)


def _label(text):
    """An integer label as a number, anything else as the string."""
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else text


def _print_best(result, args):
    """The early stop, if any, and the best evaluation's dev scores."""
    unit, patience = result.get("evaluated", "epoch"), args.patience
    if result.get("stopped_early"):
        of = f" of {args.epochs}" if unit == "epoch" and not args.max_steps else ""
        print(
            f"\nStopped early after {unit} {result['epochs_run']}{of}: no better dev "
            f"{result['monitor']} in the last {patience} {unit}(s) (--patience)."
        )
    best = f"{unit} {result['best_epoch']}"
    if unit != "epoch" and result.get("best_step") is not None:
        best = f"step {result['best_step']} ({best})"
    print(f"\nBest dev {best}: {score_text(result['best'])}")


def run_finetune(args):
    from albert_keras.tasks.finetuning_run import run_finetuning

    result = run_finetuning(
        _task(args),
        args.train,
        args.dev,
        init=args.init,
        output_dir=args.output_dir,
        vocab=args.vocab,
        overwrite=args.overwrite,
        force_resume=args.force_resume,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_fraction=args.warmup_fraction,
        warmup_steps=args.warmup_steps,
        lr_schedule=args.lr_schedule,
        max_steps=args.max_steps,
        eval_every=args.eval_every,
        optimizer=args.optimizer,
        patience=args.patience,
        metric_for_best_model=args.metric_for_best_model,
        seed=args.seed,
        max_train_examples=args.max_train_examples,
        max_dev_examples=args.max_dev_examples,
        dev_fraction=args.dev_fraction,
        lora_rank=args.lora_rank or None,
        group_by_length=args.group_by_length,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        weight_decay=args.weight_decay,
        max_grad_norm=args.max_grad_norm,
        dropout=args.dropout,
        classifier_dropout=args.classifier_dropout,
        freeze_embeddings=args.freeze_embeddings,
        adam_epsilon=args.adam_epsilon,
        gradient_checkpointing=args.gradient_checkpointing,
        mixed_precision=args.mixed_precision,
        jit_compile=not args.no_jit,
        export=not args.no_export,
    )
    _print_best(result, args)
    for name, scores in result["baselines"].items():
        print(f"Baseline {name}: {score_text(scores)}")
    for text in result.get("warnings", []):
        print(f"Warning: {text}")
    print(
        f"In {args.output_dir}: best.keras, metrics.json, settings.json, "
        "curves.png, history.csv, logs/ (TensorBoard)"
        + (", dev_predictions.json, dev_null_odds.json" if args.task == "squad" else "")
        + ("" if args.no_export else ", savedmodel/")
    )
    print(
        f"Predict new data: albert-keras predict --model {args.output_dir} --input FILE"
    )
    return 0
