"""LAMB and AdamW as ALBERT trains with them (Keras 3 optimizers)."""

from __future__ import annotations

import functools

from albert_keras.config_checks import check_accumulation_steps
from albert_keras.training.dense_adamw import DenseAdamW
from albert_keras.training.fast_lamb import FastLamb
from albert_keras.training.official_adamw import OfficialAdamW
from albert_keras.training.warmup_cosine_decay import WarmupCosineDecay
from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay

# The rate after the warmup: official linear decay (from step 0), a half
# cosine (transformers' "cosine"), or the peak rate throughout.
LR_SCHEDULES = ("linear", "cosine", "constant")

# Official `exclude_from_weight_decay`: LayerNorm parameters and biases.
NO_DECAY = ["gamma", "beta", "bias"]


def create_optimizer(
    name: str = "lamb",
    learning_rate: float = 0.00176,
    num_train_steps: int = 125_000,
    num_warmup_steps: int = 3125,
    weight_decay: float = 0.01,
    epsilon: float = 1e-6,
    clipnorm: float | None = 1.0,
    gradient_accumulation_steps: int = 1,
    lr_schedule: str = "linear",
):
    """The pretraining (LAMB) or fine-tuning (AdamW) optimizer with its schedule.

    Linear warmup then linear decay, weight decay 0.01 on everything but
    LayerNorm parameters and biases, epsilon 1e-6 and global-norm clipping
    1.0, as the official `optimization.create_optimizer` sets them. Built on
    `keras.optimizers.Lamb` / `AdamW` (the TF Addons package is end-of-life);
    LAMB is `FastLamb`, `keras.optimizers.Lamb` with its norms summed faster
    under XLA on CPU; "lamb_official" is `FastLamb(official_update=True)`,
    the official `LAMBOptimizer`'s update (no bias correction, the decay
    inside the trust ratio, no trust ratio for LayerNorm and biases);
    "adamw_official" is `OfficialAdamW`, the official
    `AdamWeightDecayOptimizer` (AdamW without bias correction).

    Args:
        name: "lamb", "lamb_official", "adamw" or "adamw_official".
        learning_rate: peak rate (the paper: 0.00176 for batch 4096).
        num_train_steps: total steps; the rate decays to 0 at the end.
        num_warmup_steps: linear warmup steps.
        weight_decay: weight decay rate (decoupled, except "lamb_official",
            which adds it to the update before the trust ratio).
        epsilon: epsilon of the second-moment denominator.
        clipnorm: global-norm clipping, or None.
        gradient_accumulation_steps: update once every N batches, with the
            mean of their gradients (Keras' `gradient_accumulation_steps`):
            N batches of B rows train as one of N * B, in the memory of B.
            `num_train_steps` and `num_warmup_steps` count updates.
        lr_schedule: after the warmup, "linear" (the official decay to 0,
            `WarmupPolynomialDecay`), "cosine" (`WarmupCosineDecay`) or
            "constant" (the peak rate).

    Example:
    >>> optimizer = create_optimizer("lamb", 1e-3, 1000, 100)
    >>> type(optimizer).__name__
    'FastLamb'
    """
    if not learning_rate >= 0:
        raise ValueError(
            f"The learning rate must be 0 or more. Received: {learning_rate}. "
            "Pass e.g. --learning-rate 5e-3 (pretraining) or 5e-5 (fine-tuning)."
        )
    if not weight_decay >= 0:
        raise ValueError(
            f"The weight decay must be 0 or more. Received: {weight_decay}. "
            "Pass e.g. --weight-decay 0.01 (the official rate), or 0 for none."
        )
    accumulation = check_accumulation_steps(gradient_accumulation_steps)
    schedule = _schedule(
        lr_schedule, learning_rate, num_train_steps, num_warmup_steps, accumulation
    )
    classes = {
        "lamb": FastLamb,
        "lamb_official": functools.partial(FastLamb, official_update=True),
        "adamw": DenseAdamW,
        "adamw_official": OfficialAdamW,
    }
    if name not in classes:
        raise ValueError(
            f"Unknown optimizer. Received: {name!r}. Allowed: {', '.join(classes)}"
        )
    optimizer = classes[name](
        learning_rate=schedule,
        weight_decay=weight_decay,
        epsilon=epsilon,
        global_clipnorm=clipnorm,
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
    )
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    return optimizer


def _schedule(name, learning_rate, steps, warmup, accumulation):
    if name not in LR_SCHEDULES:
        raise ValueError(
            f"Unknown learning-rate schedule (--lr-schedule). Received: {name!r}. "
            f"Allowed: {', '.join(LR_SCHEDULES)}"
        )
    if name == "cosine":
        return WarmupCosineDecay(
            learning_rate, steps, warmup, accumulation_steps=accumulation
        )
    return WarmupPolynomialDecay(
        learning_rate,
        decay_steps=steps,
        warmup_steps=warmup,
        power=0.0 if name == "constant" else 1.0,
        accumulation_steps=accumulation,
    )
