"""The flags of `albert-keras pretrain` beyond the data flags of `create-data`."""

from __future__ import annotations


def add_pretrain_arguments(pretrain):
    """Adds the input, training, run and JAX flags to the `pretrain` parser.

    Args:
        pretrain: the `argparse` parser of `albert-keras pretrain`.
    """
    _add_input_arguments(pretrain)
    _add_training_arguments(pretrain)
    _add_run_arguments(pretrain)


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
        "large, xlarge, xxlarge or an albert_*_v1/v2 name",
    )
    pretrain.add_argument("--config", help="albert_config.json instead of a preset")
    pretrain.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="global batch, over all replicas",
    )
    pretrain.add_argument(
        "--gradient-accumulation-steps",
        type=int,
        default=1,
        metavar="N",
        help="update once every N batches with their mean gradient: a batch "
        "of N x --batch-size in the memory of --batch-size; --steps, "
        "--warmup-steps, --save-every and --steps-per-epoch count updates",
    )
    pretrain.add_argument(
        "--steps", type=int, help="default 1000, or 400 for the embedded corpus"
    )
    pretrain.add_argument(
        "--warmup-steps",
        type=int,
        default=100,
        help="steps of linear warm-up, then --lr-schedule to --steps",
    )
    pretrain.add_argument(
        "--lr-schedule",
        default="linear",
        choices=["linear", "cosine", "constant"],
        help="the rate after the warm-up: linear decay to 0 at --steps (the "
        "official), a half cosine to 0, or constant (default: %(default)s)",
    )
    pretrain.add_argument(
        "--learning-rate",
        type=float,
        default=5e-3,
        help="peak learning rate",
    )
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
        "LAMBOptimizer's update (no bias correction, decay inside the trust "
        "ratio)",
    )


def _add_run_arguments(pretrain):
    """How the run goes: its folder, epochs, checkpoints, devices, a start
    from a model."""
    pretrain.add_argument(
        "--output-dir",
        default="runs/pretrain",
        help="the run's folder: data, checkpoints, curves.png, pretrainer.keras; "
        "the same command again resumes there",
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
        help="steps between checkpoints; a killed run resumes from the last",
    )
    pretrain.add_argument(
        "--keep-checkpoints",
        type=int,
        default=3,
        help="checkpoints kept, the newest",
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
        "device; multi_worker reads TF_CONFIG",
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
        "batch is split over the rest",
    )
    pretrain.add_argument(
        "--coordinator",
        help="JAX multi-host: host:port of process 0, with --num-processes and "
        "--process-id (jax.distributed.initialize); 'auto' on a TPU pod or "
        "SLURM, where JAX finds them itself",
    )
    pretrain.add_argument("--num-processes", type=int, help="with --coordinator")
    pretrain.add_argument("--process-id", type=int, help="with --coordinator")
