"""`PretrainingCheckpoint`: save every N steps, keep the last k, resume after a kill."""

from __future__ import annotations

import os

import keras
import numpy as np

from albert_keras.training.array_checkpoints import ArrayCheckpoints
from albert_keras.training.nan_guard import nan_detected
from albert_keras.training.optimizer_steps import (
    batches_per_update,
    optimizer_updates,
)
from albert_keras.training.worker_files import (
    remove_worker_private_dir,
    worker_private_dir,
)


class PretrainingCheckpoint(keras.callbacks.Callback):
    """Model + optimizer checkpoints every `save_every` steps; `restore()` resumes.

    The optimizer's `iterations` is the global step, so the learning-rate
    schedule resumes where it was; `restore()` returns that step so the caller
    can skip the data already seen (the pipeline is deterministic). Under
    `MultiWorkerMirroredStrategy` every worker saves (the save is a collective)
    but only the chief keeps its files. Nothing non-finite is ever saved: a
    save is skipped when the loss or any weight is NaN/inf, or after
    `NanGuard` stopped the run, so the newest checkpoint is the last good one.
    Under gradient accumulation (the optimizer's `gradient_accumulation_steps`)
    the step counts updates and saves land right after one, never on a partial
    sum of gradients: a resumed run redoes the batches after that update.

    On TensorFlow the files are `tf.train.Checkpoint`s (the strategies save
    collectively); on the other backends `ArrayCheckpoints` (`ckpt-N.npz`).

    Args:
        directory: where checkpoints go.
        save_every: steps between checkpoints.
        keep: how many checkpoints to keep.

    Example:
    >>> callback = PretrainingCheckpoint("/tmp/ckpt", save_every=100, keep=3)
    """

    def __init__(self, directory: str, save_every: int = 1000, keep: int = 3):
        super().__init__()
        if save_every < 1:
            raise ValueError(
                f"`save_every` must be >= 1. Received: save_every={save_every}"
            )
        self.directory = directory
        self.save_every = save_every
        self.keep = keep
        self._manager = None
        self._last_saved = None
        self._updates = None  # the step at the last batch end
        self._on_update = True  # no partial gradient sum held

    def _get_manager(self, model):
        if self._manager is None:
            directory = worker_private_dir(self.directory)
            if keras.backend.backend() != "tensorflow":
                self._manager = ArrayCheckpoints(directory, self.keep)
                return self._manager
            import tensorflow as tf

            checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
            self._manager = tf.train.CheckpointManager(
                checkpoint, directory, max_to_keep=self.keep
            )
        return self._manager

    def restore(self, model) -> int:
        """Restores the newest checkpoint, if any; returns the global step."""
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        manager = self._get_manager(model)
        if isinstance(manager, ArrayCheckpoints):
            # Every process restores the chief's newest checkpoint.
            ArrayCheckpoints(self.directory, self.keep).restore(model)
        elif self.latest:
            # Every worker restores the chief's newest checkpoint (a shared
            # directory), whatever directory it saves into.
            restored = manager.checkpoint.restore(self.latest)
            restored.assert_existing_objects_matched()
        step = optimizer_updates(model.optimizer)
        self._last_saved = step
        return step

    def describe_restored(self, step: int, num_train_steps: int) -> None:
        """Prints where a run of `num_train_steps` goes on from the restored
        `step`; ValueError when `step` is past them (training cannot be
        taken back: the model would be written as a shorter run's)."""
        if step > num_train_steps:
            raise ValueError(
                f"The checkpoint of this run is at step {step}, past "
                f"num_train_steps={num_train_steps}: training cannot be taken "
                f"back. Pass {step} steps or more (--steps), or use another "
                "output folder (with this run's model as its init checkpoint "
                "to start from it)."
            )
        if step == num_train_steps:
            print(f"Already trained for {step} steps (num_train_steps={step}).")
        elif step:
            print(f"Resuming from step {step} ({self.latest}).")

    def _finite(self, logs):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(float(loss)):
            return False
        return all(
            bool(keras.ops.all(keras.ops.isfinite(w.value))) for w in self.model.weights
        )

    def _save(self, logs=None):
        if nan_detected(self.model):
            return
        step = optimizer_updates(self.model.optimizer)
        if step == self._last_saved or not self._finite(logs):
            return
        manager = self._get_manager(self.model)
        if isinstance(manager, ArrayCheckpoints):
            manager.save(self.model, step)
        else:
            manager.save(checkpoint_number=step)
        self._last_saved = step

    def on_train_begin(self, logs=None):
        # A run starts right after an update (restored) or at step 0.
        self._updates = optimizer_updates(self.model.optimizer)
        self._on_update = True

    def on_train_batch_end(self, batch, logs=None):
        step = optimizer_updates(self.model.optimizer)
        # Under accumulation the step moves once every N batches; in between
        # the optimizer holds a partial sum (`check_step_accounting` keeps
        # every execution of `steps_per_execution` batches inside an update
        # or a whole number of them, so a moved step is an update's end).
        accumulating = batches_per_update(self.model.optimizer) > 1
        self._on_update = step != self._updates or not accumulating
        self._updates = step
        if self._on_update and step % self.save_every == 0:
            self._save(logs)

    def on_train_end(self, logs=None):
        if self._on_update:  # a run stopped between updates keeps the last
            self._save()
        remove_worker_private_dir(self.directory)

    @property
    def latest(self):
        """The newest checkpoint (a `.npz` file or a TensorFlow prefix), or None."""
        if keras.backend.backend() != "tensorflow":
            return ArrayCheckpoints(self.directory, self.keep).latest
        import tensorflow as tf

        return tf.train.latest_checkpoint(self.directory)


def checkpoint_files(directory):
    """The checkpoint prefixes (or `.npz` files) in a directory, oldest first."""
    saved = ArrayCheckpoints(directory)
    if saved.steps():
        return [os.path.basename(saved.path(step)) for step in saved.steps()]
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(directory)
    if state is None:
        return []
    return [os.path.basename(p) for p in state.all_model_checkpoint_paths]
