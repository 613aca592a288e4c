"""`TrainingSchedule`: a fine-tuning run's batches, updates and dev evaluations.

A run trains `--epochs` epochs, or `--max-steps` updates (the data repeats,
each epoch in its own seeded order, as many times as it takes); its dev set
is scored after every epoch, or every `--eval-every` updates, and at the end.
Each scored stretch is one Keras "epoch" of `fit` (`steps_per_epoch` =
`period_batches`): the best model, the backups, early stopping and the
curves all work per evaluation, and a killed run resumes after the last one.
"""

from __future__ import annotations

import dataclasses


def batches_per_epoch(num_rows: int, options) -> int:
    """The training batches of one epoch (at least 1).

    >>> from albert_keras.tasks.finetuning_options import FinetuningOptions
    >>> batches_per_epoch(100, FinetuningOptions(batch_size=32))
    4
    """
    return max(-(-num_rows // options.batch_size), 1)


@dataclasses.dataclass(frozen=True)
class TrainingSchedule:
    """How the training batches of a run fall into dev evaluations.

    Args:
        epoch_batches: batches of one pass over the training data.
        total_batches: batches the run trains (updates x accumulation).
        period_batches: batches between two dev evaluations (the last
            stretch may be shorter: the run ends after `total_batches`).
        accumulation: batches per optimizer update.

    Example:
    >>> from albert_keras.tasks.finetuning_options import FinetuningOptions
    >>> options = FinetuningOptions(batch_size=10, max_steps=25, eval_every=10)
    >>> schedule = TrainingSchedule.of(100, options)
    >>> schedule.updates, schedule.evaluations, schedule.data_epochs
    (25, 3, 3)
    >>> schedule.start(2)  # after 2 evaluations: epoch 2, from its first batch
    (2, 0)
    """

    epoch_batches: int
    total_batches: int
    period_batches: int
    accumulation: int = 1

    @classmethod
    def of(cls, num_rows: int, options) -> TrainingSchedule:
        """The schedule of `options` (`FinetuningOptions`) over `num_rows` rows."""
        epoch = batches_per_epoch(num_rows, options)
        accumulation = options.gradient_accumulation_steps
        if options.max_steps:
            total = options.max_steps * accumulation
        else:
            total = epoch * options.epochs
        period = options.eval_every * accumulation if options.eval_every else epoch
        return cls(epoch, total, min(period, max(total, 1)), accumulation)

    @property
    def updates(self) -> int:
        """The optimizer updates of the run (leftover batches update nothing)."""
        return self.total_batches // self.accumulation

    @property
    def evaluations(self) -> int:
        """Dev evaluations: one per period, the last one at the end of training."""
        return -(-self.total_batches // self.period_batches)

    @property
    def data_epochs(self) -> int:
        """Passes over the training data the run starts (the last may be cut)."""
        return -(-self.total_batches // self.epoch_batches)

    @property
    def per_epoch(self) -> bool:
        """Whether the evaluations fall at epoch ends (the default)."""
        return self.period_batches == self.epoch_batches

    def start(self, evaluations_done: int) -> tuple[int, int]:
        """(data epoch, batches into it) where training goes on after
        `evaluations_done` evaluations (a resumed run)."""
        return divmod(evaluations_done * self.period_batches, self.epoch_batches)

    def unit(self) -> str:
        """What one evaluation is called in messages: epoch or evaluation."""
        return "epoch" if self.per_epoch else "evaluation"

    def describe(self) -> str:
        """'25 updates (2.5 epochs), dev scored every 10 updates and at the end'.

        >>> TrainingSchedule(10, 20, 5).describe()
        '20 updates (2 epochs), dev scored every 5 updates'
        """
        epochs = self.total_batches / self.epoch_batches
        text = f"{self.updates} updates ({epochs:.3g} epochs), dev scored "
        every = self.period_batches // self.accumulation
        if self.per_epoch:
            text += "after every epoch"
        else:
            text += "every update" if every == 1 else f"every {every} updates"
        return text + (
            " and at the end" if self.total_batches % self.period_batches else ""
        )


def update_count(num_rows: int, options) -> int:
    """The optimizer updates of the run, refused when there would be none;
    says the effective batch when there is accumulation.

    Example:
    >>> from albert_keras.tasks.finetuning_options import FinetuningOptions
    >>> update_count(100, FinetuningOptions(epochs=2, batch_size=10))
    20
    """
    schedule = TrainingSchedule.of(num_rows, options)
    accumulation, batches = schedule.accumulation, schedule.total_batches
    batch_size = options.batch_size
    steps = schedule.updates
    if steps == 0:
        raise ValueError(
            f"--gradient-accumulation-steps {accumulation} is more than the "
            f"batches of the whole run ({batches}), so nothing would train. "
            f"Give at most {batches}, or a smaller --batch-size."
        )
    if accumulation > 1:
        print(
            f"Gradient accumulation: {accumulation} batches of {batch_size} per "
            f"update (batch {accumulation * batch_size} in the memory of "
            f"{batch_size}), {steps} updates",
            flush=True,
        )
    return steps
