"""`albert-keras create-data` and `albert-keras pretrain`: the main job.

With no arguments, `albert-keras pretrain` pretrains a small ALBERT (MLM +
SOP) on the embedded public-domain corpus (Jane Austen) on the CPU, then
reports MLM and SOP accuracy on held-out chapters next to a unigram baseline.
"""

from __future__ import annotations

import os

from albert_keras.pretraining.pretrain_inputs import (
    prepare_text,
    resolve_defaults,
    run_records,
    run_vocabulary,
    stats_path,
)


def _data_arguments(parser):
    from albert_keras.pretraining.create_data_cli import add_data_arguments

    # None: resolved by `_resolve_defaults` (smaller for the embedded corpus).
    add_data_arguments(
        parser, max_seq_length=None, max_predictions_per_seq=None, dupe_factor=2
    )


def add_parsers(subparsers):
    from albert_keras.pretraining.create_data_cli import add_parser

    add_parser(subparsers)  # create-data

    pretrain = subparsers.add_parser(
        "pretrain",
        help="pretrain ALBERT (MLM + SOP); with no arguments, a small model on "
        "the embedded corpus",
    )
    _data_arguments(pretrain)
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
    pretrain.add_argument("--output-dir", default="runs/pretrain")
    pretrain.add_argument("--preset", default="albert_small")
    pretrain.add_argument("--config", help="albert_config.json instead of a preset")
    pretrain.add_argument("--batch-size", type=int, default=32, help="global batch")
    pretrain.add_argument(
        "--steps", type=int, help="default 1000, or 400 for the embedded corpus"
    )
    pretrain.add_argument("--warmup-steps", type=int, default=100)
    pretrain.add_argument("--learning-rate", type=float, default=5e-3)
    pretrain.add_argument(
        "--weight-decay",
        type=float,
        default=0.01,
        help="LAMB weight decay, not on LayerNorm parameters and biases",
    )
    pretrain.add_argument(
        "--optimizer",
        default="lamb",
        choices=["lamb", "lamb_official"],
        help="lamb: keras.optimizers.Lamb; lamb_official: the official ALBERT "
        "LAMBOptimizer's update (no bias correction, decay inside the trust ratio)",
    )
    pretrain.add_argument(
        "--steps-per-epoch",
        type=int,
        help="steps per Keras epoch (a progress bar, a curve point and a "
        "held-out evaluation each); it must divide --steps (default: the "
        "largest such number up to 100)",
    )
    pretrain.add_argument("--save-every", type=int, default=100)
    pretrain.add_argument("--keep-checkpoints", type=int, default=3)
    pretrain.add_argument("--steps-per-execution", type=int, default=1)
    pretrain.add_argument(
        "--strategy",
        default="auto",
        choices=["auto", "one_device", "mirrored", "multi_worker", "tpu"],
    )
    pretrain.add_argument("--tpu", help="TPU name or address for --strategy tpu")
    pretrain.add_argument("--mixed-precision", action="store_true", help="bfloat16")
    pretrain.add_argument("--no-jit", action="store_true", help="disable XLA")
    pretrain.add_argument(
        "--init-checkpoint",
        help="continue pretraining from an official checkpoint (folder or prefix) "
        "or a pretrainer.keras of an earlier run (e.g. on your task's unlabelled "
        "text); its vocabulary is found beside it unless --vocab is given",
    )
    pretrain.add_argument("--init-from-group0", action="store_true")
    pretrain.add_argument(
        "--force-resume",
        action="store_true",
        help="resume the run in --output-dir even though training flags changed",
    )
    pretrain.set_defaults(run=run_pretrain)


def _check_arguments(args):
    if args.vocab_size is not None:
        if args.vocab:
            raise ValueError(
                "Pass --vocab (an existing vocabulary) or --vocab-size (train "
                "one on the input), not both."
            )
        if args.records:
            raise ValueError(
                "--vocab-size trains a vocabulary for new records; --records "
                "are already tokenized: pass the --vocab they were made with."
            )
    init = args.init_checkpoint
    from tensorflow.io import gfile  # gs:// paths too

    if init and not (gfile.exists(init) or gfile.glob(init + "*.index")):
        # Before any data is made.
        raise FileNotFoundError(
            f"--init-checkpoint {init!r} does not exist: pass an official "
            "checkpoint (release folder, or prefix such as "
            "albert_base/model.ckpt-best) or the pretrainer.keras of a run."
        )
    if args.held_out_every is not None and args.records:
        raise ValueError(
            "--held-out-every splits --input text; with --records pass the "
            "held-out set as --eval-records."
        )


def _check_vocabulary_size(config, vocab, vocabulary_size):
    from albert_keras.tokenizers.vocabulary_files import check_vocabulary_size

    check_vocabulary_size(
        config.vocab_size,
        vocabulary_size,
        "pass the --vocab the config (or checkpoint) was made for.",
        vocabulary=vocab,
    )


def _load_init_pretrainer(path):
    """The `AlbertPretrainer` of --init-checkpoint: a `.keras` or an official one."""
    if not path.endswith(".keras"):
        from checkpoints_convert import load_official_checkpoint

        return load_official_checkpoint(path, model="pretrainer")
    import keras

    import albert_keras.models  # noqa: F401  (registers every task model)
    from albert_keras.models.albert_pretrainer import AlbertPretrainer

    # (`_check_arguments` has checked that it exists.)
    model = keras.saving.load_model(path, compile=False)
    if not isinstance(model, AlbertPretrainer):
        raise ValueError(
            f"--init-checkpoint {path!r} holds a {type(model).__name__}, not an "
            "AlbertPretrainer: continued pretraining needs the MLM and SOP heads. "
            "Pass the pretrainer.keras of `albert-keras pretrain` or an official "
            "checkpoint."
        )
    return model


def run_pretrain(args):
    from albert_keras.training.run_lock import RunLock
    from albert_keras.training.strategies import worker_private_dir

    resolve_defaults(args)
    _check_arguments(args)
    # One run per folder (the chief's; other workers write privately).
    with RunLock(worker_private_dir(args.output_dir), "albert-keras pretrain"):
        return _run_pretrain(args)


def _run_pretrain(args):
    import keras

    from albert_keras.pretraining.pretraining_run import run_pretraining
    from albert_keras.tokenizers import load_tokenizer
    from albert_keras.training.strategies import get_strategy

    keras.utils.set_random_seed(args.seed)  # data order, masking and weights
    output_dir = args.output_dir
    config = _named_config(args)
    _check_settings(args)
    data_dir = os.path.join(output_dir, "data")
    inputs = held = None
    if args.records is None and not os.path.exists(stats_path(data_dir)):
        inputs, held = prepare_text(args, data_dir)
    vocab = run_vocabulary(args, data_dir, inputs)
    tokenizer = load_tokenizer(vocab, lowercase=args.lowercase)
    vocabulary_size = int(tokenizer.vocabulary_size())
    config = _sized_config(args, config, vocab, vocabulary_size)
    records, eval_records = run_records(args, data_dir, inputs, held, vocab)
    strategy = get_strategy(args.strategy, args.tpu)
    train_dataset, eval_dataset = _datasets(args, records, eval_records)
    init_model = None
    if args.init_checkpoint:
        init_model = _load_init_pretrainer(args.init_checkpoint)
        config = _continued_config(args, config, init_model)
        _check_vocabulary_size(config, vocab, vocabulary_size)
    _print_plan(args, config, strategy)
    metrics = run_pretraining(
        train_dataset,
        config,
        output_dir,
        strategy=strategy,
        eval_dataset=eval_dataset,
        init_model=init_model,
        **_training_options(args),
    )
    name = _write_outputs(args, metrics, vocab, tokenizer, eval_dataset)
    keras.backend.clear_session()
    print(
        f"Wrote {output_dir}/pretrainer.keras, {name}, savedmodel/ (text in), "
        "curves.png, history.csv, logs/ (TensorBoard), checkpoints/"
    )
    return 0


def _check_settings(args):
    """Refuses to resume a run started with other training flags (see
    `check_run_settings`); --force-resume goes on."""
    from albert_keras.training.run_settings import check_run_settings

    names = (
        "batch_size",
        "max_seq_length",
        "max_predictions_per_seq",
        "seed",
        "steps",
        "warmup_steps",
        "learning_rate",
        "weight_decay",
        "optimizer",
        "preset",
        "config",
        "input",
        "records",
        "vocab",
        "init_checkpoint",
    )
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


def _datasets(args, records, eval_records):
    """`run_pretraining`'s training dataset function and held-out dataset."""
    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

    lengths = (args.max_seq_length, args.max_predictions_per_seq)

    def train_dataset(skip):
        return pretraining_dataset(
            records, args.batch_size, *lengths, seed=args.seed
        ).skip(skip)

    eval_dataset = None
    if eval_records:
        eval_dataset = pretraining_dataset(
            eval_records, args.batch_size, *lengths, training=False
        )
    return train_dataset, eval_dataset


def _print_plan(args, config, strategy):
    # The config's source: --config, else the checkpoint continued (unless
    # only its group 0 is copied into a preset's config), else the preset.
    source = args.config or args.preset
    if args.init_checkpoint and not args.config and not args.init_from_group0:
        source = f"the config of {args.init_checkpoint}"
    print(
        f"Pretraining {source}: "
        f"H={config.hidden_size} L={config.num_hidden_layers} V={config.vocab_size}, "
        f"batch {args.batch_size} x {args.max_seq_length}, {args.steps} steps, "
        f"{strategy.num_replicas_in_sync} replica(s); logs in {args.output_dir}",
        flush=True,
    )


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
        eval_steps=args.eval_steps,
        init_from_group0=args.init_from_group0,
    )


def _write_outputs(args, metrics, vocab, tokenizer, eval_dataset):
    """The vocabulary and the text-in SavedModel beside the pretrainer, and the
    held-out report; returns the vocabulary's file name."""
    from albert_keras.atomic_files import copy_file, save_atomically, write_json
    from albert_keras.models import with_tokenizer
    from albert_keras.pretraining.pretraining_run import unigram_accuracy

    output_dir = args.output_dir
    model = metrics.pop("model")
    # The vocabulary beside the model: `albert-keras finetune --init
    # <output_dir>/pretrainer.keras` finds it there.
    name = "vocab.model" if vocab.endswith(".model") else "vocab.txt"
    copy_file(vocab, os.path.join(output_dir, name))
    # The backbone with its tokenizer: `serve(texts)` / `serve_pairs(a, b)` on
    # tf.string give `sequence_output` and `pooled_output`.
    text_model = with_tokenizer(model.backbone, tokenizer, args.max_seq_length)
    save_atomically(
        os.path.join(output_dir, "savedmodel"),
        lambda path: text_model.export(path, verbose=False),
    )
    if eval_dataset is not None:
        baseline = unigram_accuracy(eval_dataset, args.eval_steps)
        metrics["eval_mlm_unigram_baseline"] = baseline
        write_json(os.path.join(output_dir, "metrics.json"), metrics)
        held_out = "documents" if args.input else "chapters"
        print(
            f"\nHeld-out {held_out}: MLM accuracy {metrics['eval_mlm_accuracy']:.3f} "
            f"(unigram baseline {baseline:.3f}), SOP accuracy "
            f"{metrics['eval_sop_accuracy']:.3f} (chance 0.5)"
        )
    return name
