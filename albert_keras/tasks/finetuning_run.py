"""`run_finetuning`: one task, from files and an initial model to dev metrics.

What `albert-keras finetune` and `Task.fit` run. The task (a `Task`) says what the
data, model, loss and dev score are; this module is the training run around it:
tokenizer, backbone, AdamW, the best dev epoch kept, resume after a kill,
TensorBoard, curves, `metrics.json`, `settings.json` and the text-in export.

>>> from albert_keras.tasks import ClassificationTask
>>> result = run_finetuning(  # doctest: +SKIP
...     ClassificationTask(), "rt/train.jsonl", "rt/dev.jsonl",
...     init="runs/pretrain/pretrainer.keras", output_dir="runs/rt")
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings

import keras

from albert_keras.tasks.class_weights import class_weight_line
from albert_keras.tasks.finetuning_options import (
    DEFAULT_INIT,
    LATER_OPTIONS,
    LATER_TASK_FIELDS,
    FinetuningOptions,
    best_model_metric,
    choose_learning_rate,
    fine_tuning_backbone,
    fine_tuning_head,
    lora_summary,
    refuse_int8_full_finetuning,
)
from albert_keras.tasks.finetuning_state import FinetuningState
from albert_keras.tasks.finished_run import clear_run, finished_run, mark_finished
from albert_keras.tasks.run_outputs import write_run_outputs
from albert_keras.tasks.task_data import check_dev_source, read_train_and_dev
from albert_keras.tasks.training_schedule import TrainingSchedule, update_count
from albert_keras.training.run_settings import check_run_settings, record_run_settings


def run_finetuning(
    task,
    train,
    dev,
    init=DEFAULT_INIT,
    output_dir="runs/finetune",
    vocab=None,
    overwrite=False,
    force_resume=False,
    **options,
):
    """Fine-tunes `task` with AdamW, keeps the best dev epoch, writes a report.

    The run holds a lock on `output_dir` (a second run there is refused),
    records its settings, and keeps its state crash-safe (`FinetuningState`):
    run again after a kill, it resumes after the last finished epoch with
    the same data order; run again after it finished, it changes nothing.

    Args:
        task: a `Task` (`ClassificationTask`, `MultipleChoiceTask`,
            `SquadTask`); after the run `task.model` is the best model and
            `task.tokenizer` its tokenizer.
        train, dev: task files (JSON Lines, SQuAD JSON), or lists of dicts.
        init: the output folder of `albert-keras pretrain` (its
            `pretrainer.keras`; the default is that command's default), a
            `.keras` file, an official checkpoint folder/prefix, a
            transformers folder, a preset name (random init) or a model.
        output_dir: where `best.keras`, `metrics.json`, `settings.json`,
            `curves.png`, `history.csv`, `logs/` (TensorBoard), `backup/` and
            `savedmodel/` go.
        vocab: SentencePiece model or WordPiece vocab.txt; default: the one
            beside `init` (or the embedded one for a preset).
        overwrite: start over in a folder that holds a run (finished or not).
        force_resume: resume even if the training settings changed.
        **options: `FinetuningOptions` fields.

    Returns:
        The dict written to `metrics.json`: `best` (dev metrics of the best
        epoch), `epochs` (per epoch), `baselines`, `data` (reports), timing,
        and `task` (the task's config, which `albert-keras predict` reads).
    """
    from albert_keras.training.run_lock import RunLock

    options = FinetuningOptions(**options)
    check_dev_source(task, dev, options.dev_fraction)
    if options.group_by_length and not task.groups_by_length:
        raise ValueError(
            f"{type(task).__name__} does not group by length (--group-by-length): "
            "its rows are full-length windows of the contexts. Leave the flag out "
            "for this task."
        )
    with RunLock(output_dir, "albert-keras finetune"):
        if overwrite:
            clear_run(output_dir)
        init = _resolve_init(init)
        settings = _settings(task, train, dev, init, options)
        # Compared first (a finished run started with other settings is
        # refused too); recorded once the run really starts.
        changed = check_run_settings(output_dir, settings, force_resume, record=False)
        finished = None if changed else finished_run(task, output_dir)
        if finished is not None:
            return finished
        return _run(task, train, dev, init, output_dir, vocab, settings, options)


def _resolve_init(init):
    from checkpoints_convert.backbone_loader import resolve_init

    return resolve_init(init, _MISSING_INIT if init == DEFAULT_INIT else "")


def _run(task, train, dev, init, output_dir, vocab, settings, options):
    from checkpoints_convert.preset_sources import readable_folder

    keras.utils.set_random_seed(options.seed)
    # A release .tar.gz is read unpacked for the whole run (its vocabulary
    # too); the run records it by its name.
    with readable_folder(init) as source:
        return _run_from(
            task, train, dev, (init, source), output_dir, vocab, settings, options
        )


def _run_from(task, train, dev, inits, output_dir, vocab, settings, options):
    """The run, with `inits` = (`init` as given, where to read it)."""
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.backbone_loader import find_vocabulary

    init, source = inits
    vocab = find_vocabulary(source, vocab)
    task.tokenizer = load_tokenizer(vocab)
    started = time.perf_counter()
    splits = _read_splits(task, train, dev, options)
    _batch(task, splits, options)  # SQuAD: makes the windows (num_rows)
    warnings_found = _print_warnings(task, splits)
    schedule = TrainingSchedule.of(splits["train"].num_rows, options)
    steps = update_count(splits["train"].num_rows, options)  # before the load
    if options.max_steps or options.eval_every:
        print(f"Training {schedule.describe()}", flush=True)
    model = _build_model(task, source, steps, options, name=init)
    metric = best_model_metric(task, options)
    state = FinetuningState(output_dir, "val_" + metric, options.patience)
    state.unit = schedule.unit()
    resumed = state.restore(model)
    if resumed:
        print(state.describe(), flush=True)
    if resumed or schedule.data_epochs != options.epochs:
        _batch(task, {"train": splits["train"]}, options, schedule, state.epochs_done)
    # The data read and the model built: a run refused before this point
    # leaves no settings that would block the corrected command.
    record_run_settings(output_dir, settings)
    plan = (options, schedule, task.baselines(splits["train"], splits["dev"]))
    train_seconds = _fit(task, model, splits, output_dir, plan, state)
    state.load_best(model)
    task.model = model
    result = _result(task, (init, vocab), splits, state, plan)
    result["train_seconds"] = train_seconds
    result["total_seconds"] = time.perf_counter() - started
    result["warnings"] = warnings_found
    write_run_outputs(task, model, splits, result, vocab, output_dir, options)
    mark_finished(output_dir, result)
    return result


_MISSING_INIT = (
    "It is the default --init: where `albert-keras pretrain` writes its model. "
    "Run `albert-keras pretrain` first (a few minutes on a CPU), or pass --init "
    "with an official checkpoint folder, a transformers folder, a .keras file, "
    "or a preset name such as albert_small for random weights."
)


def _settings(task, train, dev, init, options):
    """What a resumed run must share with the run it resumes."""
    from albert_keras.training.run_settings import file_fingerprint

    recorded = dataclasses.asdict(options)
    # None of these changes a number: a run may resume with them changed.
    for name in ("verbose", "export", "jit_compile", "gradient_checkpointing"):
        recorded.pop(name)
    # Options added later are left out when they do what runs before them
    # did, so those runs still resume.
    for name, unchanged in LATER_OPTIONS.items():
        if recorded[name] in unchanged:
            recorded.pop(name)
    described = task.get_config()
    for name, unchanged in LATER_TASK_FIELDS.items():
        if described["config"].get(name, unchanged[0]) in unchanged:
            described["config"].pop(name, None)
    return {
        "task": described,
        "init": init if isinstance(init, str) else type(init).__name__,
        "train": file_fingerprint(train),
        "dev": file_fingerprint(dev),
        **recorded,
    }


def _read_splits(task, train, dev, options):
    """{"train", "dev"}: TaskData, seeded subsets, their reports printed."""
    read = read_train_and_dev(task, train, dev, options.dev_fraction)
    counts = {"train": options.max_train_examples, "dev": options.max_dev_examples}
    splits = {}
    for name, data in read.items():
        splits[name] = data.subset(counts[name], options.seed)
        drawn = ""
        # (A SQuAD dev file's draw is among all its questions, the skipped
        # ones too: they are answered "".)
        if splits[name] is not data:  # --max-*-examples
            drawn = f"; {len(splits[name].examples)} drawn (--max-{name}-examples)"
        print(f"{name}: {data.report.summary()}{drawn}", flush=True)
    if told := class_weight_line(task.config):
        print(told, flush=True)
    return splits


def _batch(task, splits, options, schedule=None, evaluations_done=0):
    """Sets each split's `.batches`. Train: its epochs back to back, from
    where `evaluations_done` evaluations of `schedule` end (default: all
    `options.epochs` from the start)."""
    epochs, skip = range(options.epochs), 0
    if schedule is not None:
        first, skip = schedule.start(evaluations_done)
        epochs = range(first, schedule.data_epochs)
    for name, data in splits.items():
        data.batches = task.dataset(
            data,
            task.tokenizer,
            options.batch_size,
            training=name == "train",
            seed=options.seed,
            epochs=epochs,
            **({"group_by_length": True} if options.group_by_length else {}),
        )
        if name == "train" and skip:  # a resume inside an epoch
            data.batches = data.batches.skip(skip)


def _print_warnings(task, splits):
    from albert_keras.tasks.data_warnings import data_warnings

    found = data_warnings(task, splits, task.config.sequence_length)
    for text in found:
        print(f"Warning: {text}", flush=True)
    return found


def _build_model(task, init, steps, options, name):
    """The compiled task model over the `init` backbone (its head reused if it fits).

    `steps`: the optimizer updates of the run (`update_count`). `name`: what
    to call `init` in the log (a release .tar.gz for its unpacked folder).
    """
    from albert_keras.models.weight_copy import reuse_task_head
    from albert_keras.tasks.init_labels import head_left_out, other_labels
    from albert_keras.training.optimizers import create_optimizer
    from albert_keras.training.xla_compile import xla_jit_compile
    from checkpoints_convert.backbone_loader import load_backbone, load_init_model

    source = load_init_model(init)  # a .keras is loaded once: backbone and head
    policy = keras.mixed_precision.dtype_policy()  # the caller's, restored
    if options.mixed_precision:
        keras.mixed_precision.set_dtype_policy("mixed_bfloat16")
    try:
        backbone = load_backbone(
            source, task.tokenizer.vocabulary_size(), task.config.sequence_length
        )
    finally:
        keras.mixed_precision.set_dtype_policy(policy)
    backbone = fine_tuning_backbone(backbone, options)
    if not options.lora_rank:
        refuse_int8_full_finetuning(backbone, name)
    # The head starts the same however the backbone was loaded or copied.
    keras.utils.set_random_seed(options.seed)
    model = task.build_model(backbone)
    fine_tuning_head(model, options)
    if isinstance(source, keras.Model):
        name = name if isinstance(name, str) else type(name).__name__
        reused = other_labels(task, init) or reuse_task_head(model, source)
        print(f"--init {name}: {reused}", flush=True)
    elif told := head_left_out(source):
        print(f"--init {name}: {told}", flush=True)
    if options.lora_rank:  # after the init weights, which it must not touch
        backbone.enable_lora(options.lora_rank)
        print(lora_summary(model, options.lora_rank), flush=True)
    # Span heads read the sequence output only, as the official ones.
    warnings.filterwarnings("ignore", "Gradients do not exist for variables.*pooler")
    losses, loss_weights = task.losses()
    choose_learning_rate(options, backbone.config.hidden_size)
    model.compile(
        optimizer=create_optimizer(
            options.optimizer,
            options.learning_rate,
            num_train_steps=max(steps, 1),
            num_warmup_steps=options.warmup_updates(steps),
            weight_decay=options.weight_decay,
            epsilon=options.adam_epsilon,
            clipnorm=options.clipnorm,
            gradient_accumulation_steps=options.gradient_accumulation_steps,
            lr_schedule=options.lr_schedule,
        ),
        loss=losses,
        loss_weights=loss_weights,
        jit_compile=xla_jit_compile(options.jit_compile),
    )
    return model


def _fit(task, model, splits, output_dir, plan, state):
    """Trains the evaluations `state` has not done; returns the seconds it took.

    `plan`: (`FinetuningOptions`, `TrainingSchedule`, the task's baselines).
    """
    from albert_keras.tasks.dev_evaluation import DevEvaluation
    from albert_keras.training.loss_curve_plot import LossCurvePlot
    from albert_keras.training.nan_guard import NanGuard
    from albert_keras.training.progress_lines import progress_output
    from albert_keras.training.stop_after_batches import StopAfterBatches

    options, schedule, baselines = plan
    if state.epochs_done >= schedule.evaluations or state.stopped:
        return 0.0
    dev = splits["dev"]
    verbose, progress = progress_output(options.verbose, unit=schedule.unit())
    callbacks = [
        NanGuard(),  # before the others: they keep nothing after a NaN loss
        DevEvaluation(  # its own line beside Keras' bar; progress lines show it
            lambda m: task.scores(m, dev, dev.batches),
            verbose=verbose != 0,
            unit=schedule.unit(),
        ),
        state,  # best.keras, backup/, history.csv, early stopping
        keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")),
        LossCurvePlot(
            os.path.join(output_dir, "curves.png"),
            title=f"fine-tuning: {type(task).__name__}",
            scores=(state.metric,),
            rows=state.rows,
            baselines=_baseline_lines(baselines, state.metric),
        ),
        # The last stretch of a --max-steps run may end inside an "epoch".
        StopAfterBatches(schedule.total_batches, schedule.period_batches),
    ]
    started = time.perf_counter()
    model.fit(
        splits["train"].batches,
        validation_data=dev.batches,
        epochs=schedule.evaluations,
        initial_epoch=state.epochs_done,
        steps_per_epoch=schedule.period_batches,
        callbacks=callbacks + progress,  # progress lines see the dev scores
        verbose=verbose,
        shuffle=False,  # the pipeline shuffles
    )
    return time.perf_counter() - started


def _baseline_lines(baselines, metric):
    """{"val_<metric>": (name, dev score)} of the task's baselines, for the plot."""
    lines = {}
    for name, scores in baselines.items():
        if metric in scores:
            label = name.replace("_", " ") + " (dev)"
            lines["val_" + metric] = (label, float(scores[metric]))
    return lines


def _result(task, inits, splits, state, plan):  # inits: (init, vocab); plan: _fit's
    (init, vocab), (options, schedule, baselines) = inits, plan
    history = {}
    for row in state.rows:
        for key, value in row.items():
            if key != "epoch":
                history.setdefault(key, []).append(value)
    best = {}
    if state.best_epoch is not None:
        row = state.rows[state.best_epoch]
        best = {k[4:]: v for k, v in row.items() if k.startswith("val_")}
    return {
        "task": task.get_config(),
        "init": init if isinstance(init, str) else type(init).__name__,
        "vocab": vocab,
        "monitor": state.metric,
        "best_epoch": None if state.best_epoch is None else state.best_epoch + 1,
        "best_step": state.best_step,
        "evaluated": state.unit,  # per epoch, or every --eval-every updates
        "best": best,
        "epochs": history,
        "epochs_run": state.epochs_done,
        # (Out of patience at the last evaluation is no early stop.)
        "stopped_early": state.stopped and state.epochs_done < schedule.evaluations,
        "baselines": baselines,
        "options": dataclasses.asdict(options),
        "data": {name: data.report.to_dict() for name, data in splits.items()},
        "train_examples": splits["train"].num_rows,
        "resumed_after_epoch": state.resumed_after or None,
    }
