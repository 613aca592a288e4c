"""`run_pretraining`: MLM + SOP training under a `tf.distribute` strategy or a
`keras.distribution` (JAX)."""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable

import keras

from albert_keras.atomic_files import save_atomically, write_json
from albert_keras.config import AlbertConfig
from albert_keras.lazy_imports import installed
from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.gradient_checkpointing import gradient_checkpointing
from albert_keras.models.weight_copy import copy_weights
from albert_keras.pretraining.held_out_statistics import (  # noqa: F401
    held_out_sizes,
    unigram_accuracy,
)
from albert_keras.pretraining.step_accounting import check_step_accounting
from albert_keras.training.history_csv import HistoryCsv, read_history_rows
from albert_keras.training.loss_curve_plot import LossCurvePlot
from albert_keras.training.nan_guard import NanGuard, nan_detected
from albert_keras.training.optimizer_steps import optimizer_updates
from albert_keras.training.optimizers import create_optimizer
from albert_keras.training.pretraining_checkpoint import PretrainingCheckpoint
from albert_keras.training.progress_lines import progress_output
from albert_keras.training.run_lock import RunLock
from albert_keras.training.tensorboard_scalars import TensorBoardScalars
from albert_keras.training.throughput_logger import ThroughputLogger
from albert_keras.training.worker_files import (
    remove_worker_private_dir,
    worker_private_dir,
)
from albert_keras.training.xla_compile import xla_jit_compile


def copy_from_group0(source: AlbertPretrainer, target: AlbertPretrainer) -> None:
    """The official `init_from_group0`: every group starts from the source's group 0.

    Embeddings and heads are copied as they are; block (g, i) of the target
    gets the values of the source's block for layer 0, inner group i.
    """
    if source.backbone.config.inner_group_num != target.backbone.config.inner_group_num:
        raise ValueError(
            "init_from_group0 needs the same `inner_group_num` in both configs. "
            f"Received: {source.backbone.config.inner_group_num} and "
            f"{target.backbone.config.inner_group_num}"
        )
    pairs = [
        (source.backbone.embeddings, target.backbone.embeddings),
        (source.backbone.pooler, target.backbone.pooler),
        (source.mlm_head, target.mlm_head),
        (source.sop_head, target.sop_head),
    ]
    encoder = target.backbone.encoder
    for layer in range(encoder.num_layers):
        for inner in range(encoder.inner_group_num):
            pairs.append(
                (source.backbone.encoder.block(0, inner), encoder.block(layer, inner))
            )
    for src, dst in pairs:
        # The MLM head tracks the tied word embeddings too: assigned twice,
        # with the same value.
        copy_weights(src, dst)


# long: 26 documented keyword arguments (a 40-line docstring), passed on by name.
def run_pretraining(
    train_dataset: Callable,
    config: AlbertConfig,
    output_dir: str,
    *,
    strategy=None,
    distribution=None,
    global_batch_size: int = 64,
    sequence_length: int = 128,
    num_train_steps: int = 1000,
    num_warmup_steps: int = 100,
    learning_rate: float = 0.00176,
    lr_schedule: str = "linear",
    weight_decay: float = 0.01,
    optimizer: str = "lamb",
    gradient_accumulation_steps: int = 1,
    steps_per_epoch: int = 100,
    save_every: int = 100,
    keep_checkpoints: int = 3,
    steps_per_execution: int = 1,
    jit_compile: bool = True,
    dtype: str | None = None,
    gradient_checkpointing: bool = False,
    eval_dataset=None,
    eval_steps: int | None = None,
    init_model: AlbertPretrainer | None = None,
    init_from_group0: bool = False,
    extra_callbacks: list | None = None,
    baselines: dict | None = None,
    verbose: int | str = "auto",
) -> dict:
    """Pretrains (or resumes pretraining) and returns the final metrics.

    Args:
        train_dataset: a function `skip -> tf.data.Dataset` of batched
            official features, already skipping `skip` batches, so a resumed
            run continues where the data stopped; or `skip ->
            PretrainingBatches` (no TensorFlow), serving the batches from
            `skip` to `num_train_steps * gradient_accumulation_steps`.
            Batches are global (the strategy or distribution splits them
            across devices).
        config: the model config.
        output_dir: checkpoints (`checkpoints/`), TensorBoard logs (`logs/`),
            `history.csv`, `curves.png` and the final `metrics.json`.
        strategy: a `tf.distribute.Strategy` (default: the current one), on
            TensorFlow.
        distribution: a `keras.distribution.Distribution` (see
            `albert_keras.models.albert_distribution`), on JAX; the model is
            built and trained in its scope.
        global_batch_size, sequence_length: for the throughput numbers.
        num_train_steps, num_warmup_steps, learning_rate: LAMB schedule.
        lr_schedule: the rate after the warmup, "linear" (the official
            decay to 0), "cosine" or "constant" (see `create_optimizer`).
        weight_decay: LAMB's weight decay (the official 0.01), not applied
            to LayerNorm parameters and biases.
        optimizer: "lamb" (`keras.optimizers.Lamb` as `FastLamb`) or
            "lamb_official" (the official `LAMBOptimizer`'s update: no bias
            correction, the decay inside the trust ratio; see `FastLamb`).
        gradient_accumulation_steps: N batches per update, their gradients
            averaged (Keras' accumulation, the schedule counting updates): a
            batch of N * `global_batch_size` in the memory of one. Steps,
            warmup, epochs and saves count updates; checkpoints land between
            updates.
        steps_per_epoch: steps per Keras epoch (one progress bar and one
            point of the curves each).
        save_every, keep_checkpoints: checkpoint frequency and retention.
        steps_per_execution: steps per compiled call (TPU throughput).
        jit_compile: XLA.
        dtype: dtype policy of the model, e.g. "mixed_bfloat16".
        gradient_checkpointing: recompute each transformer block in the
            backward pass (see `albert_keras.models.gradient_checkpointing`):
            less activation memory for about a third more compute, the same
            numbers.
        eval_dataset, eval_steps: held-out batches (a `tf.data.Dataset` of
            official features or a `PretrainingBatches`) evaluated each epoch.
        init_model: a pretrainer to start from (continued pretraining),
            e.g. converted from an official checkpoint; one with fewer
            positions than `config` gets its position table tiled (see
            `copy_weights`), to continue on longer sequences.
        init_from_group0: copy `init_model`'s group 0 into every group.
        extra_callbacks: more Keras callbacks, run after ours.
        baselines: more dashed lines on `curves.png` besides SOP chance (0.5),
            e.g. {"mlm_accuracy": ("unigram baseline", 0.065)}.
        verbose: "auto": Keras' progress bar on a terminal, plain lines in
            a log file (`progress_output`); 1, 2 or 0 as in Keras' `fit`.
    """
    strategy = _strategy(strategy, distribution)
    check_step_accounting(
        num_train_steps,
        steps_per_epoch,
        save_every,
        steps_per_execution,
        gradient_accumulation_steps,
    )
    # Workers other than the chief run the same callbacks (checkpoint saves
    # are collective) but write their files somewhere private, removed at the
    # end (a killed worker's are overwritten when the job resumes).
    run_dir, output_dir = output_dir, worker_private_dir(output_dir)
    options = dict(
        global_batch_size=global_batch_size,
        sequence_length=sequence_length,
        num_train_steps=num_train_steps,
        num_warmup_steps=num_warmup_steps,
        learning_rate=learning_rate,
        lr_schedule=lr_schedule,
        weight_decay=weight_decay,
        optimizer=optimizer,
        gradient_accumulation_steps=gradient_accumulation_steps,
        steps_per_epoch=steps_per_epoch,
        save_every=save_every,
        keep_checkpoints=keep_checkpoints,
        steps_per_execution=steps_per_execution,
        jit_compile=jit_compile,
        dtype=dtype,
        gradient_checkpointing=gradient_checkpointing,
        eval_dataset=eval_dataset,
        eval_steps=eval_steps,
        init_model=init_model,
        init_from_group0=init_from_group0,
        extra_callbacks=extra_callbacks,
        baselines=baselines,
        verbose=verbose,
    )
    scope = distribution.scope() if distribution else contextlib.nullcontext()
    with RunLock(output_dir, "albert-keras pretrain"), scope:
        return _run(train_dataset, config, output_dir, run_dir, strategy, **options)


def _strategy(strategy, distribution):
    """The `tf.distribute` strategy to build in: given, current, or none (JAX)."""
    if keras.backend.backend() != "tensorflow":
        if strategy is not None:
            raise ValueError(
                "`strategy` is a TensorFlow `tf.distribute.Strategy`; on "
                f"{keras.backend.backend()} pass `distribution` (a "
                "keras.distribution.Distribution) instead."
            )
        return None
    if distribution is not None:
        raise ValueError(
            "`distribution` (keras.distribution) runs on JAX; on TensorFlow pass "
            "`strategy` (a tf.distribute.Strategy)."
        )
    import tensorflow as tf

    return strategy or tf.distribute.get_strategy()


def _run(train_dataset, config, output_dir, run_dir, strategy, **kw):
    """`run_pretraining` once the arguments are checked and the folder locked."""
    remat = gradient_checkpointing(config) if kw["gradient_checkpointing"] else None
    scope = strategy.scope() if strategy else contextlib.nullcontext()
    with scope, remat or contextlib.nullcontext():
        model = _compiled_pretrainer(
            AlbertPretrainer(AlbertBackbone(config, dtype=kw["dtype"])),
            create_optimizer(
                kw["optimizer"],
                kw["learning_rate"],
                kw["num_train_steps"],
                kw["num_warmup_steps"],
                weight_decay=kw["weight_decay"],
                lr_schedule=kw["lr_schedule"],
                gradient_accumulation_steps=kw["gradient_accumulation_steps"],
            ),
            kw["jit_compile"],
            kw["steps_per_execution"],
        )
    checkpoint = PretrainingCheckpoint(
        os.path.join(run_dir, "checkpoints"), kw["save_every"], kw["keep_checkpoints"]
    )
    steps, per_epoch = kw["num_train_steps"], kw["steps_per_epoch"]
    batches = kw["gradient_accumulation_steps"]  # per update (step)
    step = _restore_or_start(
        model, config, checkpoint, kw["init_model"], kw["init_from_group0"], steps
    )
    callbacks = _callbacks(output_dir, config, checkpoint, step, per_epoch, kw)
    eval_dataset, eval_steps = kw["eval_dataset"], kw["eval_steps"]
    if eval_dataset is not None and eval_steps is None:
        eval_steps = _count_batches(eval_dataset)
    verbose, progress = progress_output(kw["verbose"])
    start = time.perf_counter()
    history = None
    if step < steps:
        first = step // per_epoch
        with warnings.catch_warnings():
            # The last epoch of a run resumed mid-epoch is short: the data
            # ends at exactly `num_train_steps`.
            warnings.filterwarnings("ignore", "Your input ran out of data")
            history = model.fit(
                _training_batches(
                    train_dataset(step * batches), (steps - step) * batches
                ),
                epochs=first + -(-(steps - step) // per_epoch),
                initial_epoch=first,
                steps_per_epoch=per_epoch * batches,
                validation_data=_as_xy(eval_dataset),
                validation_steps=eval_steps,
                callbacks=callbacks + list(kw["extra_callbacks"] or []) + progress,
                verbose=verbose,
                shuffle=False,  # the pipeline shuffles
            )
    seconds = time.perf_counter() - start
    metrics = _final_metrics(model, seconds, eval_dataset, eval_steps, history)
    write_json(os.path.join(output_dir, "metrics.json"), metrics)
    if not metrics["nan_detected"]:  # NaN weights: the last good checkpoint stays
        save_atomically(os.path.join(output_dir, "pretrainer.keras"), model.save)
    remove_worker_private_dir(run_dir)
    return {**metrics, "model": model}


def _training_batches(dataset, count):
    """`count` training batches as `fit`'s (x, y) (a `PyDataset` already is)."""
    if isinstance(dataset, keras.utils.PyDataset):
        distribution = keras.distribution.distribution()
        if distribution is not None:
            # `PretrainingBatches` gives each process its rows already.
            distribution.auto_shard_dataset = False
        return dataset
    return dataset.take(count).map(AlbertPretrainer.features_to_xy)


def _compiled_pretrainer(model, optimizer, jit_compile, steps_per_execution):
    """`model` compiled, its optimizer's variables made (in the strategy's scope)."""
    model.compile(
        optimizer=optimizer,
        jit_compile=xla_jit_compile(jit_compile),
        steps_per_execution=steps_per_execution,
    )
    model.optimizer.build(model.trainable_variables)
    return model


def _restore_or_start(
    model, config, checkpoint, init_model, init_from_group0, num_train_steps
) -> int:
    """Restores the latest checkpoint; else starts from `init_model` (if any).

    Returns: the step restored (0 for a new run).
    """
    step = checkpoint.restore(model)
    if step == 0 and init_model is not None:
        if init_from_group0:
            copy_from_group0(init_model, model)
        else:
            extended_from = copy_weights(init_model, model)
            if extended_from:
                print(
                    f"init_model has {extended_from} positions: positions "
                    f"{extended_from}-{config.max_position_embeddings - 1} start as "
                    "copies of its table.",
                    flush=True,
                )
    checkpoint.describe_restored(step, num_train_steps)
    return step


def _callbacks(output_dir, config, checkpoint, step, steps_per_epoch, kw):
    """Our callbacks: NaN guard, checkpoints, throughput, CSV, TensorBoard, curves."""
    history = os.path.join(output_dir, "history.csv")
    # A resumed run keeps the rows of the epochs before its checkpoint.
    first = step // steps_per_epoch
    rows = [r for r in read_history_rows(history) if r["epoch"] < first]
    return [
        NanGuard(),
        checkpoint,
        ThroughputLogger(kw["global_batch_size"], kw["sequence_length"]),
        HistoryCsv(history, rows),
        _tensorboard(os.path.join(output_dir, "logs")),
        LossCurvePlot(
            os.path.join(output_dir, "curves.png"),
            title=f"ALBERT pretraining, {config.hidden_size}H",
            rows=rows,
            baselines={"sop_accuracy": ("chance", 0.5), **(kw["baselines"] or {})},
        ),
    ]


def _tensorboard(log_dir):
    """Keras' TensorBoard callback (`tf.summary`), or `TensorBoardScalars`
    where TensorFlow is not installed."""
    if installed("tensorflow"):
        return keras.callbacks.TensorBoard(log_dir)
    return TensorBoardScalars(log_dir)


def _count_batches(dataset) -> int | None:
    """The batches of a held-out set (None for none).

    TFRecords have no known length, and Keras warns "Your input ran out of
    data" at the end of such a validation set: count its batches.
    """
    if isinstance(dataset, keras.utils.PyDataset):
        return len(dataset) or None
    return int(dataset.reduce(0, lambda count, _: count + 1)) or None


def _as_xy(dataset):
    """Batches of official features as `fit`'s (x, y), or None for None."""
    if dataset is None or isinstance(dataset, keras.utils.PyDataset):
        return dataset
    return dataset.map(AlbertPretrainer.features_to_xy)


def _final_metrics(model, seconds, eval_dataset, eval_steps, history) -> dict:
    """The step reached, the training time, NaN, and the held-out metrics
    (the last validation's when `fit` ran: the same weights, scored once)."""
    nan = nan_detected(model)
    step = optimizer_updates(model.optimizer)
    metrics = {"global_step": step, "train_seconds": seconds, "nan_detected": nan}
    if eval_dataset is None:
        return metrics
    logs = history.history if history and not nan else {}
    scores = {
        k.removeprefix("val_"): v[-1]
        for k, v in logs.items()
        if k.startswith("val_") and v
    }
    if not scores:  # no epoch ran here (or NaN): score the held-out set now
        data = _as_xy(eval_dataset)
        scores = model.evaluate(data, steps=eval_steps, verbose=0, return_dict=True)
    return {**metrics, **{f"eval_{k}": float(v) for k, v in scores.items()}}
