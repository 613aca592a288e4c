"""`FinetuningOptions`: how a task is trained, apart from what the task is."""

from __future__ import annotations

import dataclasses
import math
import numbers

from albert_keras.config_checks import check_accumulation_steps

# Where `albert-keras pretrain` writes by default, and so what `finetune`
# starts from by default: the README's first command, then fine-tuning.
DEFAULT_INIT = "runs/pretrain"

# The peak fine-tuning rate by hidden size (up to H: rate). Small models
# trained here need a large rate: at 5e-5 a 4-layer H=256 model stays at the
# majority class on a pair task (docs/fine-tuning.md). The released base and
# large models use the official recipes' 1e-5 to 5e-5 (3e-5 for MNLI and RTE),
# xlarge and xxlarge the low end.
LEARNING_RATES = ((256, 2e-4), (512, 1e-4), (1024, 3e-5))
LARGEST_MODEL_RATE = 1e-5


# Each option added after the first runs, and its values that train as before
# it: a run's settings leave them out, so the older runs still resume.
LATER_OPTIONS = {
    "lora_rank": (None, 0),  # full fine-tuning
    "group_by_length": (False,),
    "gradient_accumulation_steps": (1,),
    "weight_decay": (0.01,),
    "adam_epsilon": (1e-6,),
    "max_grad_norm": (1.0,),
    "max_steps": (None,),
    "eval_every": (None,),
    "warmup_steps": (None,),
    "lr_schedule": ("linear",),
    "dropout": (None,),
    "classifier_dropout": (None,),
    "dev_fraction": (None,),
    "freeze_embeddings": (False,),
    "metric_for_best_model": (None,),
}
# The same for the task config's fields (`settings["task"]["config"]`).
LATER_TASK_FIELDS = {"class_weight": (None,), "label_smoothing": (0.0, 0)}


# The counts checked to be whole numbers >= 1, and what leaving them out means.
_COUNTS = {
    "epochs": "",
    "batch_size": "",
    "max_train_examples": " (or unset: all)",
    "max_dev_examples": " (or unset: all)",
    "max_steps": " (or unset: --epochs)",
    "eval_every": " (or unset: after every epoch)",
}


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def auto_learning_rate(hidden_size: int) -> float:
    """The default peak fine-tuning rate for a backbone of this hidden size.

    Example:
    >>> auto_learning_rate(256), auto_learning_rate(768), auto_learning_rate(4096)
    (0.0002, 3e-05, 1e-05)
    """
    for largest, rate in LEARNING_RATES:
        if hidden_size <= largest:
            return rate
    return LARGEST_MODEL_RATE


@dataclasses.dataclass
class FinetuningOptions:
    """The training settings of `run_finetuning` (the task's own are its config).

    Args:
        epochs, batch_size, learning_rate, warmup_fraction: AdamW with linear
            warmup and linear decay. `learning_rate` None: chosen by the
            backbone's hidden size (`auto_learning_rate`).
        max_steps: train this many updates instead of `epochs` epochs (the
            data repeats, each pass in its own seeded order; transformers'
            `max_steps`, the official recipes' `train_step`).
        eval_every: score dev (and keep the best model, back up, count
            `patience`) every N updates and at the end, instead of after
            every epoch: for long epochs (`TrainingSchedule`).
        warmup_steps: warm up this many updates (the official recipes'
            `warmup_step`) instead of `warmup_fraction` of them.
        lr_schedule: the rate after the warmup: "linear" (the official
            decay to 0), "cosine" (a half cosine to 0, transformers'
            `lr_scheduler_type="cosine"`) or "constant".
        weight_decay: AdamW's decoupled weight decay (the official 0.01),
            not on LayerNorm parameters and biases; 0: none.
        adam_epsilon: AdamW's epsilon (the official 1e-6; transformers'
            Trainer uses 1e-8).
        max_grad_norm: the gradients' global norm is clipped to this (the
            official 1.0; transformers' option of the same name); 0 or None:
            no clipping.
        dropout: the encoder's dropout while fine-tuning, on embeddings,
            block outputs and attention weights (transformers'
            `hidden_dropout_prob` and `attention_probs_dropout_prob`); None:
            the model's own (v1 releases 0.1, v2 releases and `albert-keras
            pretrain` runs 0). The head keeps the official 0.1 unless
            `classifier_dropout` says otherwise.
        freeze_embeddings: keep the embedding tables and their LayerNorm
            as loaded (`AlbertBackbone.freeze_embeddings`).
        classifier_dropout: the dropout before the task head (transformers'
            `classifier_dropout_prob`); None: the official 0.1. The SQuAD
            heads have none (neither have the official ones).
        metric_for_best_model: the dev score the best model is chosen by
            (and `patience` counts on), one of the task's `metric_names`
            (transformers' option of the same name); None: its `monitor`.
        gradient_checkpointing: recompute each transformer block in the
            backward pass (`with_gradient_checkpointing`; transformers'
            option of the same name): less memory for about a third more
            compute, the same numbers, so a run may resume with it on or off.
        optimizer: "adamw" (`DenseAdamW`: `keras.optimizers.AdamW`, embedding
            gradients summed first) or "adamw_official" (`OfficialAdamW`:
            the official optimizer, no bias correction).
        patience: dev evaluations (epochs, or `eval_every` stretches)
            without a better dev metric before stopping.
        seed: shuffling, dropout and initialization seed.
        max_train_examples, max_dev_examples: a seeded draw of this many.
        dev_fraction: with no dev file, hold out this share of the training
            examples as the dev set (each class in proportion; the same
            examples whatever the `seed`; `TaskData.split`).
        mixed_precision: mixed_bfloat16.
        jit_compile: XLA.
        export: also write `savedmodel/`, the best model on raw strings.
        lora_rank: None or 0: full fine-tuning. A rank R: LoRA, after the
            `init` weights are loaded (`AlbertBackbone.enable_lora`): only
            rank-R adapters of the attention's query and value projections
            and the task head train, the rest of the backbone is frozen.
            `best.keras` holds the adapters merged into the kernels: a plain
            model, loaded and run as any other. The backups of a LoRA run
            also keep the adapters and the unmerged kernels (`lora.npz`), so
            a resumed run continues exactly.
        group_by_length: batch training texts of similar length together
            (transformers' `group_by_length`; see
            `task_datasets.length_grouped`): batches carry less padding, so
            steps are faster; the batches differ from those of a plain
            shuffle. Texts, pairs, multiple choice and tags (not squad).
        gradient_accumulation_steps: update once every N batches with the
            mean of their gradients (Keras' `gradient_accumulation_steps`,
            transformers' Trainer option of the same name): `batch_size` B
            and N train as batch N * B (its schedule, its steps) in the
            memory of B. Batches left over at the end of the run (fewer
            than N) update nothing.
        verbose: "auto": Keras' progress bar on a terminal, plain lines in
            a log file (`progress_output`); 1, 2 or 0 as in Keras' `fit`.

    Example:
    >>> FinetuningOptions(epochs=1).batch_size
    32
    """

    epochs: int = 3
    batch_size: int = 32
    learning_rate: float | None = None
    warmup_fraction: float = 0.1
    optimizer: str = "adamw"
    patience: int = 2
    seed: int = 0
    max_train_examples: int | None = None
    max_dev_examples: int | None = None
    dev_fraction: float | None = None
    mixed_precision: bool = False
    jit_compile: bool = True
    export: bool = True
    verbose: int | str = "auto"
    lora_rank: int | None = None
    group_by_length: bool = False
    gradient_accumulation_steps: int = 1
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-6
    max_grad_norm: float | None = 1.0
    max_steps: int | None = None
    eval_every: int | None = None
    warmup_steps: int | None = None
    lr_schedule: str = "linear"
    dropout: float | None = None
    classifier_dropout: float | None = None
    freeze_embeddings: bool = False
    gradient_checkpointing: bool = False
    metric_for_best_model: str | None = None

    def __post_init__(self):
        if self.lr_schedule not in ("linear", "cosine", "constant"):
            raise ValueError(
                "`lr_schedule` (--lr-schedule) must be linear, cosine or "
                f"constant. Received: lr_schedule={self.lr_schedule!r}"
            )
        if self.optimizer not in ("adamw", "adamw_official"):
            raise ValueError(
                f"Unknown optimizer {self.optimizer!r}. Allowed: adamw, adamw_official"
            )
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None and not (_whole(value) and value >= 1):
                raise ValueError(
                    f"`{name}` (--{name.replace('_', '-')}) must be at least 1, "
                    f"a whole number{_COUNTS[name]}. Received: {name}={value!r}"
                )
        if self.warmup_steps is not None and not (
            _whole(self.warmup_steps) and self.warmup_steps >= 0
        ):
            raise ValueError(
                "`warmup_steps` (--warmup-steps) is the number of warm-up "
                "updates: give 0 or more (or leave it out for "
                f"--warmup-fraction). Received: warmup_steps={self.warmup_steps!r}"
            )
        if not 0 <= self.warmup_fraction <= 1:
            raise ValueError(
                "`warmup_fraction` (--warmup-fraction) is the share of the steps "
                "spent warming up: give a number from 0 to 1 (0.1 is the "
                f"official recipes'). Received: warmup_fraction={self.warmup_fraction}"
            )
        if self.patience < 1:
            # 0 stopped every run after its first epoch, improving or not.
            raise ValueError(
                "`patience` (--patience) is the number of dev evaluations "
                "(epochs, or --eval-every stretches) without a better dev score "
                "before stopping: give 1 or more (a run stops at its end "
                f"anyway). Received: patience={self.patience}"
            )
        check_accumulation_steps(self.gradient_accumulation_steps)
        fraction = self.dev_fraction
        number = isinstance(fraction, int | float) and not isinstance(fraction, bool)
        if fraction is not None and not (number and 0 < fraction < 1):
            raise ValueError(
                "`dev_fraction` (--dev-fraction) is the share of the training "
                "examples held out as the dev set: give a number between 0 and "
                f"1, e.g. 0.1. Received: {fraction!r}"
            )
        self._check_regularization()
        if self.lora_rank is not None and self.lora_rank < 0:
            raise ValueError(
                "`lora_rank` must be 0 or None (full fine-tuning) or at least 1. "
                f"Received: lora_rank={self.lora_rank}"
            )

    def _check_regularization(self):
        if not (isinstance(self.weight_decay, int | float) and self.weight_decay >= 0):
            raise ValueError(
                "`weight_decay` (--weight-decay) is AdamW's decay rate: give 0 "
                "(none) or more (0.01 is the official recipes'). Received: "
                f"weight_decay={self.weight_decay!r}"
            )
        eps = self.adam_epsilon
        if not (isinstance(eps, int | float) and not isinstance(eps, bool) and eps > 0):
            raise ValueError(
                "`adam_epsilon` (--adam-epsilon) is AdamW's epsilon: give a "
                f"number above 0 (1e-6 is the official one). Received: {eps!r}"
            )
        norm = self.max_grad_norm
        if norm is not None and not (isinstance(norm, int | float) and norm >= 0):
            raise ValueError(
                "`max_grad_norm` (--max-grad-norm) is the global norm the "
                "gradients are clipped to: give a number above 0 (1.0 is the "
                f"official recipes'), or 0 for no clipping. Received: {norm!r}"
            )
        for name, whose, usual in (
            ("dropout", "the encoder's", "0.1 is the v1 releases'"),
            ("classifier_dropout", "the task head's", "0.1 is the official"),
        ):
            rate = getattr(self, name)
            number = isinstance(rate, int | float) and not isinstance(rate, bool)
            if rate is not None and not (number and 0 <= rate < 1):
                flag = "--" + name.replace("_", "-")
                raise ValueError(
                    f"`{name}` ({flag}) is {whose} dropout rate: give a number "
                    f"from 0 (none) up to but not including 1 ({usual}), or "
                    f"leave it out for the default. Received: {rate!r}"
                )

    def warmup_updates(self, updates: int) -> int:
        """The warm-up of a run of `updates` updates (at most all of them).

        >>> FinetuningOptions(warmup_steps=50).warmup_updates(40)
        40
        """
        if self.warmup_steps is not None:
            return min(self.warmup_steps, updates)
        return int(self.warmup_fraction * updates)

    @property
    def clipnorm(self) -> float | None:
        """The `global_clipnorm` of the optimizer: None for no clipping."""
        return self.max_grad_norm or None


def lora_summary(model, rank):
    """'LoRA rank 8: 12,345 of 11,700,000 parameters trained'."""
    trained = sum(math.prod(v.shape) for v in model.trainable_weights)
    total = sum(
        math.prod(v.shape)
        for v in model.weights
        if "seed_generator_state" not in v.path  # dropout's, not parameters
    )
    return f"LoRA rank {rank}: {trained:,} of {total:,} parameters trained"


def choose_learning_rate(options, hidden_size):
    """Sets `options.learning_rate` when it is None (auto), and says so."""
    if options.learning_rate is None:
        options.learning_rate = auto_learning_rate(hidden_size)
        how = f"auto, for hidden size {hidden_size}; set --learning-rate to change it"
    else:
        how = "given"
    print(f"Learning rate {options.learning_rate:g} ({how})", flush=True)


def best_model_metric(task, options) -> str:
    """The dev score the run keeps its best model by: `task.monitor`, or the
    `options.metric_for_best_model` it offers (said in the log)."""
    name = options.metric_for_best_model
    if name is None:
        return task.monitor
    if name not in task.metric_names:
        raise ValueError(
            f"--metric-for-best-model {name}: {type(task).__name__} scores dev "
            f"by {', '.join(task.metric_names)} (higher is better); give one "
            f"of them, or leave it out for {task.monitor}."
        )
    print(
        f"The best model is the one of the best dev {name} "
        f"(--metric-for-best-model; the task's own: {task.monitor})",
        flush=True,
    )
    return name


def fine_tuning_backbone(backbone, options):
    """`backbone` with `options.dropout`, `options.gradient_checkpointing`
    (a copy with the same weights when either changes it) and
    `options.freeze_embeddings` applied, said in the log."""
    from albert_keras.models.weight_copy import (
        with_dropout,
        with_gradient_checkpointing,
    )

    own = backbone.config.hidden_dropout_prob
    backbone = with_dropout(backbone, options.dropout)
    if options.dropout is not None:
        rate = f"{options.dropout:g} (--dropout; the model's: {own:g})"
        print(f"Encoder dropout {rate}", flush=True)
    if options.gradient_checkpointing:
        backbone = with_gradient_checkpointing(backbone)
        print(
            "Gradient checkpointing: each block is recomputed in the backward "
            "pass (--gradient-checkpointing)",
            flush=True,
        )
    if options.freeze_embeddings:  # on the backbone that trains (the copy)
        frozen = backbone.freeze_embeddings()
        print(f"Embeddings frozen: {frozen:,} parameters (--freeze-embeddings)")
    return backbone


def fine_tuning_head(model, options) -> None:
    """`options.classifier_dropout` set on the task model's head, said in the
    log (None: the head keeps its 0.1)."""
    from albert_keras.models.weight_copy import set_head_dropout

    if options.classifier_dropout is not None:
        own = set_head_dropout(model, options.classifier_dropout)
        rate = (
            f"{options.classifier_dropout:g} (--classifier-dropout; default: {own:g})"
        )
        print(f"Head dropout {rate}", flush=True)


def refuse_int8_full_finetuning(backbone, name) -> None:
    """Keras's int8 layers keep their kernels frozen: full fine-tuning of an
    int8 `--init` trained the weights left in float32 only (LayerNorms...)
    (LoRA adapters over int8 kernels do train: call it without `lora_rank`).

    >>> from albert_keras import AlbertBackbone
    >>> refuse_int8_full_finetuning(AlbertBackbone("albert_tiny"), "albert_tiny")
    """
    from albert_keras.models.quantized_layers import quantized_layer_modes

    modes = quantized_layer_modes(backbone)
    if modes:
        layer, mode = next(iter(modes.items()))
        raise ValueError(
            f"--init {name if isinstance(name, str) else type(name).__name__} "
            f"is {mode}-quantized (e.g. {layer!r}): its {mode} kernels cannot "
            "train, so full fine-tuning would train only the weights left in "
            "float32 (LayerNorms, biases). Fine-tune the float32 model and "
            "quantize the result (model.quantize('int8'), or `albert-keras "
            "export --quantize int8`), or pass --lora-rank R to train LoRA "
            f"adapters over the {mode} kernels."
        )
