"""`albert-keras create-data` and `albert-keras pretrain`: the main job.

With no arguments, `albert-keras pretrain` pretrains a small ALBERT (MLM +
SOP) on the embedded public-domain corpus (Jane Austen) on the CPU, then
reports MLM and SOP accuracy on held-out chapters next to a unigram baseline.
"""

from __future__ import annotations

import os

from albert_keras.pretraining.pretrain_inputs import (
    check_input_flags,
    datasets,
    load_init_pretrainer,
    prepare_text,
    report_data,
    report_held_out,
    resolve_defaults,
    run_records,
    run_vocabulary,
    stats_path,
)


def add_parsers(subparsers):
    from albert_keras.pretraining.create_data_cli import add_data_arguments, add_parser

    add_parser(subparsers)  # create-data

    pretrain = subparsers.add_parser(
        "pretrain",
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
    _add_input_arguments(pretrain)
    _add_training_arguments(pretrain)
    _add_run_arguments(pretrain)
    pretrain.set_defaults(run=run_pretrain)


def _add_input_arguments(pretrain):
    """What is trained and scored on besides the data flags: --held-out-every
    to --eval-steps."""
    pretrain.add_argument(
        "--held-out-every",
        type=int,
        help="hold out every k-th document of each --input file (whole) and "
        "report MLM and SOP accuracy on them (default: 10 for the embedded "
        "corpus, none for --input)",
    )
    pretrain.add_argument(
        "--vocab-size",
        type=int,
        help="train a SentencePiece vocabulary of this many pieces on the "
        "training documents first (instead of --vocab; the embedded "
        "austen-8k.model fits 19th-century English prose, not other text)",
    )
    pretrain.add_argument("--records", help="TFRecords to train on (skip create-data)")
    pretrain.add_argument("--eval-records", help="held-out TFRecords")
    pretrain.add_argument(
        "--eval-steps", type=int, help="held-out batches per evaluation (default all)"
    )


def _add_training_arguments(pretrain):
    """The model and its optimization: --preset to --optimizer."""
    pretrain.add_argument(
        "--preset",
        default="albert_small",
        help="model size: albert_tiny, albert_small (4 layers, H=256), base, "
        "large, xlarge, xxlarge or an albert_*_v1/v2 name (default: %(default)s)",
    )
    pretrain.add_argument("--config", help="albert_config.json instead of a preset")
    pretrain.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="global batch, over all replicas (default: %(default)s)",
    )
    pretrain.add_argument(
        "--steps", type=int, help="default 1000, or 400 for the embedded corpus"
    )
    pretrain.add_argument(
        "--warmup-steps",
        type=int,
        default=100,
        help="steps of linear warm-up, then linear decay to 0 at --steps "
        "(default: %(default)s)",
    )
    pretrain.add_argument(
        "--learning-rate",
        type=float,
        default=5e-3,
        help="peak learning rate (default: %(default)s)",
    )
    pretrain.add_argument(
        "--weight-decay",
        type=float,
        default=0.01,
        help="LAMB weight decay, not on LayerNorm parameters and biases "
        "(default: %(default)s)",
    )
    pretrain.add_argument(
        "--optimizer",
        default="lamb",
        choices=["lamb", "lamb_official"],
        help="lamb: keras.optimizers.Lamb; lamb_official: the official ALBERT "
        "LAMBOptimizer's update (no bias correction, decay inside the trust "
        "ratio) (default: %(default)s)",
    )


def _add_run_arguments(pretrain):
    """How the run goes: its folder, epochs, checkpoints, devices, a start
    from a model."""
    pretrain.add_argument(
        "--output-dir",
        default="runs/pretrain",
        help="the run's folder: data, checkpoints, curves.png, pretrainer.keras; "
        "the same command again resumes there (default: %(default)s)",
    )
    pretrain.add_argument(
        "--steps-per-epoch",
        type=int,
        help="steps per Keras epoch (a progress bar, a held-out evaluation and "
        "a history.csv row each); it must divide --steps (default: the "
        "largest such number up to 100)",
    )
    pretrain.add_argument(
        "--save-every",
        type=int,
        default=100,
        help="steps between checkpoints; a killed run resumes from the last "
        "(default: %(default)s)",
    )
    pretrain.add_argument(
        "--keep-checkpoints",
        type=int,
        default=3,
        help="checkpoints kept, the newest (default: %(default)s)",
    )
    pretrain.add_argument(
        "--steps-per-execution",
        type=int,
        default=1,
        help="steps per compiled call (fewer round trips on a TPU); it must "
        "divide --steps, --steps-per-epoch and --save-every (default: "
        "%(default)s)",
    )
    pretrain.add_argument(
        "--strategy",
        default="auto",
        choices=["auto", "one_device", "mirrored", "multi_worker", "tpu"],
        help="auto: mirrored over the GPUs if there are several, else one "
        "device; multi_worker reads TF_CONFIG (default: %(default)s)",
    )
    pretrain.add_argument("--tpu", help="TPU name or address for --strategy tpu")
    _add_jax_arguments(pretrain)
    pretrain.add_argument(
        "--mixed-precision",
        action="store_true",
        help="compute in bfloat16, weights in float32 (mixed_bfloat16)",
    )
    pretrain.add_argument(
        "--no-jit", action="store_true", help="disable XLA (starts faster)"
    )
    pretrain.add_argument(
        "--gradient-checkpointing",
        action="store_true",
        help="recompute each transformer block in the backward pass: less "
        "memory (longer sequences, bigger batches, xxlarge) for about a third "
        "more compute; the same numbers",
    )
    pretrain.add_argument(
        "--init-checkpoint",
        help="continue pretraining from an official checkpoint (folder or prefix) "
        "or a pretrainer.keras of an earlier run (e.g. on your task's unlabelled "
        "text); its vocabulary is found beside it unless --vocab is given",
    )
    pretrain.add_argument(
        "--init-from-group0",
        action="store_true",
        help="with --init-checkpoint: start every layer group of --preset or "
        "--config from the checkpoint's group 0 (the official init_from_group0)",
    )
    pretrain.add_argument(
        "--force-resume",
        action="store_true",
        help="resume the run in --output-dir even though training flags changed",
    )


def _add_jax_arguments(pretrain):
    """How a JAX run spreads over devices: --distribution to --process-id."""
    pretrain.add_argument(
        "--distribution",
        default="none",
        choices=["none", "data", "model"],
        help="JAX (KERAS_BACKEND=jax) only: data: keras.distribution.DataParallel, "
        "the global batch split over every device (and host); model: "
        "ModelParallel, the big kernels also split over --model-shards devices "
        "(default: %(default)s, one device)",
    )
    pretrain.add_argument(
        "--model-shards",
        type=int,
        default=2,
        help="with --distribution model: devices each kernel is split over; the "
        "batch is split over the rest (default: %(default)s)",
    )
    pretrain.add_argument(
        "--coordinator",
        help="JAX multi-host: host:port of process 0, with --num-processes and "
        "--process-id (jax.distributed.initialize); 'auto' on a TPU pod or "
        "SLURM, where JAX finds them itself",
    )
    pretrain.add_argument("--num-processes", type=int, help="with --coordinator")
    pretrain.add_argument("--process-id", type=int, help="with --coordinator")


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

    resolve_defaults(args)
    check_input_flags(args)
    _start_jax_processes(args)
    # One run per folder (the chief's; other workers write privately).
    with RunLock(worker_private_dir(args.output_dir), "albert-keras pretrain"):
        return _run_pretrain(args)


def _run_pretrain(args):
    import keras

    from albert_keras.models.albert_distribution import albert_distribution
    from albert_keras.pretraining.pretraining_run import (
        held_out_sizes,
        run_pretraining,
    )

    keras.utils.set_random_seed(args.seed)  # data order, masking and weights
    output_dir = args.output_dir
    config = _named_config(args)
    _check_settings(args)
    data_dir = os.path.join(output_dir, "data")
    inputs = held = None
    if args.records is None and not os.path.exists(stats_path(data_dir)):
        inputs, held = prepare_text(args, data_dir)
    vocab = run_vocabulary(args, data_dir, inputs)
    vocabulary_size = _vocabulary_size(vocab)
    config = _sized_config(args, config, vocab, vocabulary_size)
    strategy = _strategy(args)
    distribution = albert_distribution(args.distribution, args.model_shards)
    train_dataset, eval_dataset = _datasets(args, data_dir, inputs, held, vocab)
    sizes = None
    if eval_dataset is not None:
        sizes = held_out_sizes(eval_dataset, args.eval_steps)
    init_model = None
    if args.init_checkpoint:
        init_model = load_init_pretrainer(args.init_checkpoint)
        config = _continued_config(args, config, init_model)
        _check_vocabulary_size(config, vocab, vocabulary_size)
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
    name, text_model = _write_outputs(args, metrics, vocab, sizes)
    keras.backend.clear_session()
    print(
        f"Wrote {output_dir}/pretrainer.keras, {name}, {text_model}"
        "curves.png, history.csv, logs/ (TensorBoard), checkpoints/"
    )
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

        return get_strategy(args.strategy, args.tpu)
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

    if installed("tensorflow"):
        records, eval_records = run_records(args, data_dir, inputs, held, vocab)
        return datasets(args, records, eval_records)
    from albert_keras.pretraining.pretrain_arrays import (
        array_datasets,
        check_array_inputs,
        run_arrays,
    )

    check_array_inputs(args, vocab)
    return array_datasets(args, *run_arrays(args, data_dir, inputs, held, vocab))


def _check_settings(args):
    """Refuses to resume a run started with other training flags (see
    `check_run_settings`); --force-resume goes on."""
    from albert_keras.training.run_settings import check_run_settings

    names = (
        "batch_size max_seq_length max_predictions_per_seq seed steps warmup_steps "
        "learning_rate weight_decay optimizer preset config input records vocab "
        "init_checkpoint"
    ).split()
    settings = {name: getattr(args, name, None) for name in names}
    check_run_settings(args.output_dir, settings, args.force_resume)


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
        f"batch {args.batch_size} x {args.max_seq_length}, {args.steps} steps, "
        f"{devices} device(s); logs in {args.output_dir}",
        flush=True,
    )
    report_data(args, data_dir, sizes)


def _training_options(args) -> dict:
    """`run_pretraining`'s keyword arguments from the flags."""
    return dict(
        global_batch_size=args.batch_size,
        sequence_length=args.max_seq_length,
        num_train_steps=args.steps,
        num_warmup_steps=min(args.warmup_steps, args.steps),
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        optimizer=args.optimizer,
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


def _write_outputs(args, metrics, vocab, sizes):
    """The vocabulary and the text-in SavedModel beside the pretrainer, and the
    held-out report; returns the vocabulary's file name and what the text
    model became."""
    from albert_keras.atomic_files import copy_file, write_json
    from albert_keras.training.worker_files import is_chief

    output_dir = args.output_dir
    model = metrics.pop("model")
    if not is_chief():  # the chief writes the run's files
        return "", ""
    # The vocabulary beside the model: `albert-keras finetune --init
    # <output_dir>/pretrainer.keras` finds it there.
    name = "vocab.model" if vocab.endswith(".model") else "vocab.txt"
    copy_file(vocab, os.path.join(output_dir, name))
    text_model = _export_text_model(args, model, vocab)
    if sizes:
        metrics.update({f"eval_{k}": v for k, v in sizes.items()})
        write_json(os.path.join(output_dir, "metrics.json"), metrics)
        report_held_out(args, sizes, metrics)
    return name, text_model


def _export_text_model(args, model, vocab):
    """`savedmodel/`: the backbone with its tokenizer (`serve(texts)` /
    `serve_pairs(a, b)` on tf.string give `sequence_output` and
    `pooled_output`). TensorFlow builds it: here on TensorFlow, in a
    TensorFlow process from `pretrainer.keras` on another backend, not at all
    without TensorFlow."""
    import keras

    from albert_keras.lazy_imports import installed

    path = os.path.join(args.output_dir, "savedmodel")
    if keras.backend.backend() == "tensorflow":
        export_text_model(
            model.backbone, vocab, args.lowercase, args.max_seq_length, path
        )
        return "savedmodel/ (text in), "
    if not installed("tensorflow"):
        print("No savedmodel/ (text in): TensorFlow is not installed.", flush=True)
        return ""
    import subprocess
    import sys

    code = (
        "import sys, keras; from albert_keras.pretraining.pretrain_cli import "
        "export_text_model as e; m = keras.saving.load_model(sys.argv[1], "
        "compile=False); e(m.backbone, sys.argv[2], sys.argv[3] == 'True', "
        "int(sys.argv[4]), sys.argv[5])"
    )
    pretrainer = os.path.join(args.output_dir, "pretrainer.keras")
    options = [pretrainer, vocab, str(args.lowercase), str(args.max_seq_length), path]
    env = dict(os.environ, KERAS_BACKEND="tensorflow")
    subprocess.run([sys.executable, "-c", code, *options], env=env, check=True)
    return "savedmodel/ (text in), "


def export_text_model(backbone, vocab, lowercase, sequence_length, path):
    """Writes `path`: `backbone` with the tokenizer of `vocab`, text in (a
    SavedModel, atomically). TensorFlow backend."""
    import albert_keras.models  # noqa: F401  (registers every task model)
    from albert_keras.atomic_files import save_atomically
    from albert_keras.models import with_tokenizer
    from albert_keras.tokenizers import load_tokenizer

    tokenizer = load_tokenizer(vocab, lowercase=lowercase)
    text_model = with_tokenizer(backbone, tokenizer, sequence_length)
    save_atomically(path, lambda p: text_model.export(p, verbose=False))
