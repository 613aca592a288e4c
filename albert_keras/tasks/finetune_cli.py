"""`albert-keras finetune`: one task from JSON Lines / SQuAD files to dev metrics."""

from __future__ import annotations

TASKS = ("classify", "pair", "regress", "choice", "squad")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune on a task (classify, pair, regress, choice, squad)",
        description=(
            "Fine-tune ALBERT with AdamW (linear warmup and decay), evaluating "
            "the task metric on --dev after every epoch; the best epoch is kept "
            "(best.keras) and training stops early when dev stops improving. "
            "Writes metrics.json, curves.png, history.csv and TensorBoard logs; "
            "a killed run resumes from its last epoch when started again."
        ),
    )
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--train", required=True, help="training file")
    parser.add_argument("--dev", required=True, help="dev file (model selection)")
    parser.add_argument(
        "--init",
        default="albert_small",
        help="preset name (random init), a .keras file (e.g. pretrainer.keras of "
        "`albert-keras pretrain`) or an official checkpoint folder "
        "(default: albert_small)",
    )
    parser.add_argument(
        "--vocab",
        help="SentencePiece model or vocab.txt (default: the one beside --init, or "
        "the embedded one for a preset)",
    )
    parser.add_argument("--output-dir", default="runs/finetune")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--warmup-fraction", type=float, default=0.1)
    parser.add_argument(
        "--optimizer",
        default="adamw",
        choices=["adamw", "adamw_official"],
        help="adamw: keras.optimizers.AdamW; adamw_official: the official "
        "AdamWeightDecayOptimizer (no bias correction)",
    )
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument(
        "--text-fields",
        help="classify/pair/regress: the record key of the text, or two keys "
        "separated by a comma for pairs (default: found in the training file: "
        "text, sentence, text_a; pairs text_a,text_b, premise,hypothesis, ...)",
    )
    parser.add_argument(
        "--labels",
        help="classify/pair: the label set in class order, separated by commas "
        "(integers are read as numbers), e.g. 0,1 or negative,positive; "
        "records with another label are skipped and reported (default: the "
        "training file's labels, refusing mixed types and stray rare ones)",
    )
    parser.add_argument(
        "--patience", type=int, default=2, help="epochs without dev improvement"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-train-examples", type=int)
    parser.add_argument("--max-dev-examples", type=int)
    _add_squad_arguments(parser)
    _add_run_arguments(parser)
    parser.set_defaults(run=run_finetune)


def _add_squad_arguments(parser):
    squad = parser.add_argument_group("squad")
    squad.add_argument(
        "--head",
        default="v2",
        choices=["v2", "simple"],
        help="v2: the official answer-class head (SQuAD 2.0); simple: start/end",
    )
    squad.add_argument("--doc-stride", type=int, default=64)
    squad.add_argument("--max-query-length", type=int, default=32)
    squad.add_argument("--max-answer-length", type=int, default=30)
    squad.add_argument(
        "--null-window-fraction",
        type=float,
        default=1.0,
        help="share of training windows without an answer to keep (1.0: all)",
    )
    squad.add_argument(
        "--null-score",
        default="official",
        help="no-answer score thresholded on dev: official (v2: the answer-class "
        "logit); span_adjusted: that minus the best span's log probability, so "
        "confident spans are answered",
    )


def _add_run_arguments(parser):
    parser.add_argument("--mixed-precision", action="store_true", help="bfloat16")
    parser.add_argument("--no-jit", action="store_true", help="disable XLA")
    parser.add_argument(
        "--no-export",
        action="store_true",
        help="skip savedmodel/ (the model with its tokenizer, on strings; "
        "squad: questions and contexts in, answers out)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --output-dir that holds a run (without it a "
        "finished run is left as it is and a killed one resumes)",
    )
    parser.add_argument(
        "--force-resume",
        action="store_true",
        help="resume a killed run even though training flags or data changed",
    )


def _task(args):
    """The task class `--task` names, configured from the flags."""
    from albert_keras.tasks import task_from_name

    fields = {"sequence_length": args.max_seq_length}
    if args.task == "squad":
        fields.update(
            head=args.head,
            doc_stride=args.doc_stride,
            max_query_length=args.max_query_length,
            max_answer_length=args.max_answer_length,
            null_window_fraction=args.null_window_fraction,
            null_score=args.null_score,
        )
    elif args.task != "choice":
        if args.text_fields:
            fields["text_fields"] = tuple(args.text_fields.split(","))
        if args.labels and args.task != "regress":
            fields["labels"] = [_label(v) for v in args.labels.split(",")]
    return task_from_name(args.task, **fields)


def _label(text):
    """An integer label as a number, anything else as the string."""
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else text


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
        optimizer=args.optimizer,
        patience=args.patience,
        seed=args.seed,
        max_train_examples=args.max_train_examples,
        max_dev_examples=args.max_dev_examples,
        mixed_precision=args.mixed_precision,
        jit_compile=not args.no_jit,
        export=not args.no_export,
    )
    best = ", ".join(f"{k} {v:.4f}" for k, v in result["best"].items())
    print(f"\nBest dev epoch {result['best_epoch']}: {best}")
    for name, scores in result["baselines"].items():
        text = ", ".join(f"{k} {v:.4f}" for k, v in scores.items())
        print(f"Baseline {name}: {text}")
    print(
        f"Wrote {args.output_dir}/best.keras, metrics.json, settings.json, "
        "curves.png, history.csv, logs/ (TensorBoard)"
        + (", dev_predictions.json, dev_null_odds.json" if args.task == "squad" else "")
        + ("" if args.no_export else ", savedmodel/")
    )
    print(
        f"Predict new data: albert-keras predict --model {args.output_dir} --input FILE"
    )
    return 0
