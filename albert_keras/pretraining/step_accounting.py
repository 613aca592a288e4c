"""`check_step_accounting`: the sizes with which a pretraining run ends where asked."""

from __future__ import annotations

import math

from albert_keras.config_checks import check_accumulation_steps


def check_step_accounting(
    steps, steps_per_epoch, save_every, steps_per_execution, accumulation=1
):
    """Refuses sizes with which a run would not end at `steps` or skip a save.

    Keras runs whole executions of `steps_per_execution` batches, so epochs
    and checkpoints land on its multiples only. Under gradient accumulation
    (`accumulation` batches per update) the steps count updates: each of them
    is `accumulation` batches, and an execution must hold part of one update
    or whole updates (a checkpoint lands only between updates).

    Args:
        steps, steps_per_epoch, save_every: in updates (optimizer steps).
        steps_per_execution: batches per compiled call.
        accumulation: batches per update (`gradient_accumulation_steps`).

    Example:
    >>> check_step_accounting(400, 100, 100, 1)
    >>> check_step_accounting(400, 100, 100, 8, accumulation=4)
    """
    accumulation = check_accumulation_steps(accumulation)
    names = ("steps_per_execution", "steps", "steps_per_epoch", "save_every")
    values = (steps_per_execution, steps, steps_per_epoch, save_every)
    flags = ["--" + name.replace("_", "-") for name in names]  # what a user typed
    for name, flag, value in zip(names, flags, values, strict=True):
        if value < 1:
            raise ValueError(f"`{name}` ({flag}) must be at least 1. Received: {value}")
    _check_execution_fits_updates(steps_per_execution, accumulation)
    # A value v is whole executions when its v * accumulation batches are.
    unit = steps_per_execution // math.gcd(steps_per_execution, accumulation)
    for name, flag, value in zip(names, flags, values, strict=True):
        if value % unit:
            _refuse_partial_execution(
                name, flag, value, unit, steps_per_execution, accumulation
            )


def _check_execution_fits_updates(steps_per_execution, accumulation):
    """An execution inside one update, or whole updates."""
    if accumulation == 1:
        return
    if steps_per_execution % accumulation and accumulation % steps_per_execution:
        raise ValueError(
            f"--steps-per-execution {steps_per_execution} neither divides nor is a "
            f"multiple of --gradient-accumulation-steps {accumulation}: an "
            "execution would end inside an update, where no checkpoint can be "
            f"made. Use --steps-per-execution {accumulation} (or a divisor or "
            "multiple of it)."
        )


def _refuse_partial_execution(
    name, flag, value, unit, steps_per_execution, accumulation
):
    """The ValueError for `value` of `flag`, naming the nearest multiples of
    `unit` (the updates of a whole number of executions)."""
    fix = value - value % unit or unit
    batches = ""
    if accumulation > 1:
        batches = (
            f", {value * accumulation} batches with --gradient-accumulation-steps "
            f"{accumulation},"
        )
    raise ValueError(
        f"{flag} {value} ({name}={value}{batches}) is not a multiple of "
        f"--steps-per-execution {steps_per_execution}: Keras runs whole "
        "executions, so the run would overshoot or skip that step. Use "
        f"{flag} {fix} (or {fix + unit}), or another --steps-per-execution."
    )
