"""`FinetuningOptions`: how a task is trained, apart from what the task is."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class FinetuningOptions:
    """The training settings of `run_finetuning` (the task's own are its config).

    Args:
        epochs, batch_size, learning_rate, warmup_fraction: AdamW with linear
            warmup and linear decay, weight decay 0.01 (not on LayerNorm and
            biases), global-norm clipping 1.0.
        optimizer: "adamw" (`keras.optimizers.AdamW`) or "adamw_official"
            (`OfficialAdamW`: the official optimizer, no bias correction).
        patience: epochs without a better dev metric before stopping.
        seed: shuffling, dropout and initialization seed.
        max_train_examples, max_dev_examples: a seeded draw of this many.
        mixed_precision: mixed_bfloat16.
        jit_compile: XLA.
        export: also write `savedmodel/`, the best model on raw strings.
        verbose: Keras progress bar (1) or not (0).

    Example:
    >>> FinetuningOptions(epochs=1).batch_size
    32
    """

    epochs: int = 3
    batch_size: int = 32
    learning_rate: float = 5e-5
    warmup_fraction: float = 0.1
    optimizer: str = "adamw"
    patience: int = 2
    seed: int = 0
    max_train_examples: int | None = None
    max_dev_examples: int | None = None
    mixed_precision: bool = False
    jit_compile: bool = True
    export: bool = True
    verbose: int = 1

    def __post_init__(self):
        if self.optimizer not in ("adamw", "adamw_official"):
            raise ValueError(
                f"Unknown optimizer {self.optimizer!r}. Allowed: adamw, adamw_official"
            )
        for name in ("epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"`{name}` must be at least 1. Received: "
                    f"{name}={getattr(self, name)}"
                )
