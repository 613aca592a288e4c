"""`albert-keras create-data` and `albert-keras pretrain`: the main job.

With no arguments, `albert-keras pretrain` pretrains a small ALBERT (MLM +
SOP) on the embedded public-domain corpus (Jane Austen) on the CPU, then
reports MLM and SOP accuracy on held-out chapters next to a unigram baseline.
"""

from __future__ import annotations

import os
import sys

from albert_keras.cli_help import DefaultsHelpFormatter
from albert_keras.pretraining.init_checkpoint import load_init_pretrainer
from albert_keras.pretraining.pretrain_inputs import (
    check_input_flags,
    datasets,
    prepare_text,
    report_data,
    resolve_defaults,
    run_records,
    run_vocabulary,
    stats_path,
)
from albert_keras.pretraining.pretrain_settings import (
    check_pretrain_settings,
    finished_run,
    mark_finished,
    refuse_nan_run,
)


def add_parsers(subparsers):
    from albert_keras.pretraining.create_data_cli import add_data_arguments, add_parser
    from albert_keras.pretraining.pretrain_arguments import add_pretrain_arguments

    add_parser(subparsers)  # create-data

    pretrain = subparsers.add_parser(
        "pretrain",
        formatter_class=DefaultsHelpFormatter,
        help="pretrain ALBERT (MLM + SOP); with no arguments, a small model on "
        "the embedded corpus",
        description="Text -> pretraining data -> ALBERT trained on masked words "
        "(MLM) and sentence order (SOP), scored on held-out text next to a "
        "unigram baseline and chance. Writes --output-dir; the same command "
        "again resumes from the last checkpoint.",
    )
    # None: set by `resolve_defaults` (smaller for the embedded corpus).
    add_data_arguments(
        pretrain, max_seq_length=None, max_predictions_per_seq=None, dupe_factor=2
    )
    add_pretrain_arguments(pretrain)
    pretrain.set_defaults(run=run_pretrain)


def _check_vocabulary_size(config, vocab, vocabulary_size):
    from albert_keras.tokenizers.vocabulary_files import check_vocabulary_size

    check_vocabulary_size(
        config.vocab_size,
        vocabulary_size,
        "pass the --vocab the config (or checkpoint) was made for.",
        vocabulary=vocab,
    )


def run_pretrain(args):
    from albert_keras.training.run_lock import RunLock
    from albert_keras.training.worker_files import worker_private_dir

    check_input_flags(args)
    resolve_defaults(args)  # after: --records are read for their lengths
    _start_jax_processes(args)
    # One run per folder (the chief's; other workers write privately).
    with RunLock(worker_private_dir(args.output_dir), "albert-keras pretrain"):
        return _run_pretrain(args)


def _run_pretrain(args):
    import keras

    from albert_keras.models.albert_distribution import (
        albert_distribution,
        check_model_shards,
    )
    from albert_keras.pretraining.pretrain_outputs import write_outputs
    from albert_keras.pretraining.pretraining_run import (
        held_out_sizes,
        run_pretraining,
    )
    from albert_keras.pretraining.step_accounting import check_step_accounting
    from albert_keras.training.run_settings import record_run_settings
    from albert_keras.training.worker_files import worker_private_dir

    keras.utils.set_random_seed(args.seed)  # data order, masking and weights
    output_dir = args.output_dir
    config = _named_config(args)
    # Before the data is made (hours on a large corpus), not after.
    check_step_accounting(
        args.steps,
        args.steps_per_epoch,
        args.save_every,
        args.steps_per_execution,
        args.gradient_accumulation_steps,
    )
    settings = check_pretrain_settings(args)
    if finished_run(args):
        return 0
    # Before the data is made too: a TPU that cannot be reached is refused
    # before minutes of vocabulary training.
    strategy = _strategy(args)
    distribution = albert_distribution(args.distribution, args.model_shards)
    # Each process of a multi-process job makes its own copy of the data
    # (the same, from the same seed): the chief in the run, the others in
    # their private folders.
    data_dir = os.path.join(worker_private_dir(output_dir), "data")
    inputs = held = None
    if args.records is None and not os.path.exists(stats_path(data_dir)):
        inputs, held = prepare_text(args, data_dir)
    vocab = run_vocabulary(args, data_dir, inputs)
    vocabulary_size = _vocabulary_size(vocab)
    config = _sized_config(args, config, vocab, vocabulary_size)
    init_model = None
    if args.init_checkpoint:  # a vocabulary it does not fit: before the data
        init_model = load_init_pretrainer(args.init_checkpoint)
        config = _continued_config(args, config, init_model)
        _check_vocabulary_size(config, vocab, vocabulary_size)
    train_dataset, eval_dataset = _datasets(args, data_dir, inputs, held, vocab)
    # Recorded once the data is made: a run refused before leaves nothing
    # that would block the corrected command.
    record_run_settings(output_dir, settings)
    sizes = None
    if eval_dataset is not None:
        sizes = held_out_sizes(eval_dataset, args.eval_steps)
    if args.distribution == "model":
        check_model_shards(config, args.model_shards)
    _print_plan(args, config, _device_count(strategy, distribution), data_dir, sizes)
    baseline = sizes and {
        "mlm_accuracy": ("unigram baseline", sizes["mlm_unigram_baseline"])
    }
    metrics = run_pretraining(
        train_dataset,
        config,
        output_dir,
        strategy=strategy,
        distribution=distribution,
        eval_dataset=eval_dataset,
        init_model=init_model,
        baselines=baseline or None,
        **_training_options(args),
    )
    refuse_nan_run(args, metrics)
    written = write_outputs(args, metrics, vocab, sizes)
    keras.backend.clear_session()
    if written:  # the chief's
        print(
            f"Wrote {output_dir}/pretrainer.keras, {written[0]}, {written[1]}"
            "curves.png, history.csv, logs/ (TensorBoard), checkpoints/"
        )
        mark_finished(args)
    return 0


def _start_jax_processes(args):
    """`jax.distributed.initialize` for --coordinator (a multi-host JAX job)."""
    if not args.coordinator:
        return
    import keras

    if keras.backend.backend() != "jax":
        raise ValueError(
            "--coordinator starts a multi-host JAX job: set KERAS_BACKEND=jax (on "
            "TensorFlow, use --strategy multi_worker with TF_CONFIG)."
        )
    import jax

    try:  # CPU hosts (tests, CPU clusters) exchange through gloo
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError:  # a JAX without the option
        pass
    if args.coordinator == "auto":
        jax.distributed.initialize()
        return
    if args.num_processes is None or args.process_id is None:
        raise ValueError(
            "--coordinator HOST:PORT needs --num-processes N and --process-id I "
            "(0 on the coordinator's host), or --coordinator auto on a TPU pod."
        )
    jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id)


def _vocabulary_size(vocab):
    """The vocabulary's size, as the tokenizer counts it (tensorflow-text), or
    read from the file where TensorFlow is not installed."""
    from albert_keras.lazy_imports import installed

    if not installed("tensorflow"):
        from albert_keras.pretraining.pretrain_arrays import vocabulary_size

        return vocabulary_size(vocab)
    from albert_keras.tokenizers import load_tokenizer

    return int(load_tokenizer(vocab).vocabulary_size())


def _strategy(args):
    """The `tf.distribute` strategy of --strategy on TensorFlow; None elsewhere."""
    import keras

    if keras.backend.backend() == "tensorflow":
        from albert_keras.training.strategies import get_strategy

        try:
            return get_strategy(args.strategy, args.tpu)
        except RuntimeError as error:  # no TPU reached: it names the flags
            if args.strategy != "tpu":
                raise
            raise ValueError(str(error)) from error
    if args.strategy != "auto" or args.tpu:
        raise ValueError(
            f"--strategy {args.strategy} is a TensorFlow strategy; on "
            f"{keras.backend.backend()} use --distribution data or model "
            "(JAX), or KERAS_BACKEND=tensorflow."
        )
    return None


def _device_count(strategy, distribution):
    """Devices the batch is split over."""
    if strategy is not None:
        return strategy.num_replicas_in_sync
    if distribution is None:
        return 1
    return len(distribution.device_mesh.devices.reshape(-1))


def _datasets(args, data_dir, inputs, held, vocab):
    """Training dataset function and held-out batches: TFRecords through
    tf.data where TensorFlow is installed, NumPy instances otherwise."""
    from albert_keras.lazy_imports import installed
    from albert_keras.pretraining.pretrain_arrays import (
        array_datasets,
        check_array_inputs,
        one_device,
        run_arrays,
    )

    if installed("tensorflow"):
        records, eval_records = run_records(args, data_dir, inputs, held, vocab)
        train, held_out = datasets(args, records, eval_records)
        if held_out is not None and not one_device(args):
            # Every batch is split over the devices: whole batches only, as
            # `PretrainingBatches` serves them without TensorFlow.
            held_out = held_out.rebatch(args.batch_size, drop_remainder=True)
        return train, held_out

    check_array_inputs(args, vocab)
    return array_datasets(args, *run_arrays(args, data_dir, inputs, held, vocab))


def _named_config(args):
    """The config of --config, else of --preset."""
    from albert_keras.config import AlbertConfig

    if args.config:
        return AlbertConfig.from_json_file(args.config)
    return AlbertConfig.from_preset(args.preset)


def _sized_config(args, config, vocab, vocabulary_size):
    """The config for the vocabulary and --max-seq-length.

    A preset takes the size of the vocabulary it is trained with (a
    --config's size must match it). A preset keeps 128 positions for
    sequences up to 128 (`albert-keras finetune` extends them for longer
    ones); an albert_config.json keeps its own (512 in the official ones),
    longer sequences raising either.
    """
    if args.config:
        _check_vocabulary_size(config, vocab, vocabulary_size)
    elif not args.init_checkpoint:
        config = config.replace(vocab_size=vocabulary_size)
    positions = config.max_position_embeddings if args.config else 128
    return config.replace(max_position_embeddings=max(args.max_seq_length, positions))


def _continued_config(args, config, init_model):
    """The config when continuing --init-checkpoint: the checkpoint's own
    (unless only its group 0 is copied), with as many positions as it has
    (its table copied whole), more for longer sequences (tiled,
    `copy_weights`)."""
    if not args.init_from_group0:
        config = init_model.backbone.config
    positions = init_model.backbone.config.max_position_embeddings
    return config.replace(max_position_embeddings=max(args.max_seq_length, positions))


def _print_plan(args, config, devices, data_dir, sizes):
    """The model and the run, how often it sees its data, what its held-out
    figures rest on; warnings (stderr) where they would mislead."""
    # The config's source: --config, else the checkpoint continued (unless
    # only its group 0 is copied into a preset's config), else the preset.
    source = args.config or args.preset
    if args.init_checkpoint and not args.config and not args.init_from_group0:
        source = f"the config of {args.init_checkpoint}"
    print(
        f"Pretraining {source}: "
        f"H={config.hidden_size} L={config.num_hidden_layers} V={config.vocab_size}, "
        f"batch {_batch(args)} x {args.max_seq_length}, {args.steps} steps, "
        f"{devices} device(s); logs in {args.output_dir}",
        flush=True,
    )
    report_data(args, data_dir, sizes)
    if args.warmup_steps > args.steps:
        print(
            f"albert-keras pretrain: warning: --warmup-steps {args.warmup_steps} "
            f"is more than --steps {args.steps}: the whole run warms up (the rate "
            "peaks at the last step, with no decay); pass fewer --warmup-steps.",
            file=sys.stderr,
            flush=True,
        )


def _batch(args) -> str:
    """The batch of an update, and how it is made under accumulation."""
    batch, n = args.batch_size, args.gradient_accumulation_steps
    if n == 1:
        return str(batch)
    return f"{batch * n} ({n} accumulated batches of {batch}, in the memory of {batch})"


def _training_options(args) -> dict:
    """`run_pretraining`'s keyword arguments from the flags."""
    return dict(
        global_batch_size=args.batch_size,
        sequence_length=args.max_seq_length,
        num_train_steps=args.steps,
        num_warmup_steps=min(args.warmup_steps, args.steps),
        learning_rate=args.learning_rate,
        lr_schedule=args.lr_schedule,
        weight_decay=args.weight_decay,
        optimizer=args.optimizer,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        steps_per_epoch=args.steps_per_epoch,
        save_every=args.save_every,
        keep_checkpoints=args.keep_checkpoints,
        steps_per_execution=args.steps_per_execution,
        jit_compile=not args.no_jit,
        dtype="mixed_bfloat16" if args.mixed_precision else None,
        gradient_checkpointing=args.gradient_checkpointing,
        eval_steps=args.eval_steps,
        init_from_group0=args.init_from_group0,
    )
