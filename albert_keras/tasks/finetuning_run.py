"""`run_finetuning`: one task, from files and an initial model to dev metrics.

What `albert-keras finetune` and `Task.fit` run. The task (a `Task`) says what
the data, model, loss and dev score are; this module is the training run
around it: tokenizer, backbone, AdamW, the best dev epoch kept, resume after
a kill, TensorBoard, curves, `metrics.json`, `settings.json` and the text-in
export.

>>> from albert_keras.tasks import ClassificationTask
>>> result = run_finetuning(  # doctest: +SKIP
...     ClassificationTask(), "rt/train.jsonl", "rt/dev.jsonl",
...     init="runs/pretrain/pretrainer.keras", output_dir="runs/rt")
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import time
import warnings

import keras
import numpy as np

from albert_keras.tasks.finetuning_options import FinetuningOptions


def run_finetuning(
    task,
    train,
    dev,
    init="albert_small",
    output_dir="runs/finetune",
    vocab=None,
    **options,
):
    """Fine-tunes `task` with AdamW, keeps the best dev epoch, writes a report.

    Args:
        task: a `Task` (`ClassificationTask`, `MultipleChoiceTask`,
            `SquadTask`); after the run `task.model` is the best model and
            `task.tokenizer` its tokenizer.
        train, dev: task files (JSON Lines, SQuAD JSON), or lists of dicts.
        init: a preset name (random init), a `.keras` file (e.g. the
            `pretrainer.keras` of `albert-keras pretrain`), an official
            checkpoint folder/prefix, a transformers folder, or a model.
        output_dir: where `best.keras`, `metrics.json`, `settings.json`,
            `curves.png`, `history.csv`, `logs/` (TensorBoard), `backup/` and
            `savedmodel/` go.
        vocab: SentencePiece model or WordPiece vocab.txt; default: the one
            beside `init` (or the embedded one for a preset).
        **options: `FinetuningOptions` fields.

    Returns:
        The dict written to `metrics.json`: `best` (dev metrics of the best
        epoch), `epochs` (per epoch), `baselines`, `data` (reports), timing,
        and `task` (the task's config, which `albert-keras predict` reads).
    """
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.backbone_loader import find_vocabulary

    options = FinetuningOptions(**options)
    keras.utils.set_random_seed(options.seed)
    os.makedirs(output_dir, exist_ok=True)
    vocab = find_vocabulary(init, vocab)
    task.tokenizer = load_tokenizer(vocab)
    started = time.perf_counter()
    splits = _read_splits(task, train, dev, options)
    model, source = _build_model(task, init, splits, options)
    history, train_seconds, earlier = _fit(task, model, splits, output_dir, options)
    task.model = model
    result = _result(task, init, vocab, splits, history, earlier, options)
    result["train_seconds"] = train_seconds
    result["train_examples_per_second"] = (
        splits["train"].num_rows * (result["epochs_run"] - earlier) / train_seconds
    )
    result["total_seconds"] = time.perf_counter() - started
    _write_outputs(task, model, splits, result, vocab, output_dir, options)
    return result


def _read_splits(task, train, dev, options):
    """{"train", "dev"}: TaskData with their tf.data pipelines (`.batches`)."""
    splits = {
        "train": task.read(train, training=True).subset(
            options.max_train_examples, options.seed
        ),
        "dev": task.read(dev).subset(options.max_dev_examples, options.seed),
    }
    for name, data in splits.items():
        print(f"{name}: {data.report.summary()}", flush=True)
        data.batches = task.dataset(
            data,
            task.tokenizer,
            options.batch_size,
            training=name == "train",
            seed=options.seed,
        )
    return splits


def _build_model(task, init, splits, options):
    """The compiled task model over the `init` backbone (its head reused if it fits)."""
    from albert_keras.models.weight_copy import reuse_task_head
    from albert_keras.training.optimizers import create_optimizer
    from checkpoints_convert.backbone_loader import load_backbone, load_init_model

    source = load_init_model(init)  # a .keras is loaded once: backbone and head
    if options.mixed_precision:
        keras.mixed_precision.set_dtype_policy("mixed_bfloat16")
    try:
        backbone = load_backbone(
            source, task.tokenizer.vocabulary_size(), task.config.sequence_length
        )
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    model = task.build_model(backbone)
    if isinstance(source, keras.Model):
        name = init if isinstance(init, str) else type(init).__name__
        print(f"--init {name}: {reuse_task_head(model, source)}", flush=True)
    # Span heads read the sequence output only, as the official ones.
    warnings.filterwarnings("ignore", "Gradients do not exist for variables.*pooler")
    steps = -(-splits["train"].num_rows // options.batch_size) * options.epochs
    losses, loss_weights = task.losses()
    model.compile(
        optimizer=create_optimizer(
            options.optimizer,
            options.learning_rate,
            num_train_steps=max(steps, 1),
            num_warmup_steps=int(options.warmup_fraction * steps),
        ),
        loss=losses,
        loss_weights=loss_weights,
        jit_compile=options.jit_compile,
    )
    return model, source


def _fit(task, model, splits, output_dir, options):
    """Trains with the callbacks; (history, seconds, epochs before a resume)."""
    from albert_keras.tasks.dev_evaluation import DevEvaluation
    from albert_keras.training.loss_curve_plot import LossCurvePlot

    monitor = "val_" + task.monitor
    history_path = os.path.join(output_dir, "history.csv")
    backup_dir = os.path.join(output_dir, "backup")
    # A killed run resumes from its last finished epoch (BackupAndRestore);
    # the history of the epochs before the kill is kept, and only a better
    # epoch replaces best.keras.
    resuming = os.path.isdir(backup_dir) and os.path.isfile(history_path)
    earlier = read_history(history_path) if resuming else {}
    dev = splits["dev"]
    callbacks = [
        DevEvaluation(
            lambda m: task.scores(m, dev, dev.batches), verbose=bool(options.verbose)
        ),
        keras.callbacks.BackupAndRestore(backup_dir),
        keras.callbacks.ModelCheckpoint(
            os.path.join(output_dir, "best.keras"),
            monitor=monitor,
            mode="max",
            save_best_only=True,
            initial_value_threshold=max(earlier.get(monitor, []), default=None),
        ),
        keras.callbacks.EarlyStopping(
            monitor=monitor,
            mode="max",
            patience=options.patience,
            restore_best_weights=True,
        ),
        keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")),
        keras.callbacks.CSVLogger(history_path, append=resuming),
        LossCurvePlot(
            os.path.join(output_dir, "curves.png"),
            title=f"fine-tuning: {type(task).__name__}",
            scores=(task.monitor,),
        ),
    ]
    started = time.perf_counter()
    model.fit(
        splits["train"].batches,
        validation_data=dev.batches,
        epochs=options.epochs,
        callbacks=callbacks,
        verbose=options.verbose,
        shuffle=False,  # the pipeline shuffles
    )
    seconds = time.perf_counter() - started
    return read_history(history_path), seconds, len(earlier.get(monitor, []))


def _result(task, init, vocab, splits, history, earlier, options):
    monitor = "val_" + task.monitor
    epochs_run = len(history.get(monitor, []))
    best_epoch = int(np.argmax(history[monitor])) if epochs_run else None
    best = {}
    if best_epoch is not None:
        best = {k[4:]: v[best_epoch] for k, v in history.items() if k[:4] == "val_"}
    return {
        "task": task.get_config(),
        "init": init if isinstance(init, str) else type(init).__name__,
        "vocab": vocab,
        "monitor": task.monitor,
        "best_epoch": None if best_epoch is None else best_epoch + 1,
        "best": best,
        "epochs": history,
        "epochs_run": epochs_run,
        "baselines": task.baselines(splits["train"], splits["dev"]),
        "options": dataclasses.asdict(options),
        "data": {name: data.report.to_dict() for name, data in splits.items()},
        "train_examples": splits["train"].num_rows,
        "resumed_after_epoch": earlier or None,
    }


def _write_outputs(task, model, splits, result, vocab, output_dir, options):
    """metrics.json, settings.json, the vocabulary, dev outputs and savedmodel/."""
    dev = splits["dev"]
    if result["epochs_run"] and hasattr(task, "write_dev_outputs"):
        task.write_dev_outputs(model, dev, dev.batches, output_dir)
    with open(os.path.join(output_dir, "metrics.json"), "w") as f:
        json.dump(result, f, indent=2, default=_plain)
    # What `albert-keras predict` needs to prepare inputs as training did.
    settings = {
        "task": result["task"],
        "vocab": os.path.basename(vocab),
        "batch_size": options.batch_size,
    }
    with open(os.path.join(output_dir, "settings.json"), "w") as f:
        json.dump(settings, f, indent=2, default=_plain)
    beside = os.path.join(output_dir, os.path.basename(vocab))
    if not os.path.exists(beside) or not os.path.samefile(vocab, beside):
        shutil.copy(vocab, beside)
    task.result = result
    if options.export and result["epochs_run"]:
        task.export(os.path.join(output_dir, "savedmodel"))


def read_history(path):
    """The CSVLogger file as {column: [floats]} (epochs of every run)."""
    if not os.path.isfile(path):
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    columns = {}
    for row in rows:
        for key, value in row.items():
            if key != "epoch" and value not in (None, ""):
                columns.setdefault(key, []).append(float(value))
    return columns


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
