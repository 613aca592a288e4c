"""`FinetuningState`: a fine-tuning run's state, kept so that nothing is lost."""

from __future__ import annotations

import math
import os
import shutil

import keras
import numpy as np

from albert_keras.atomic_files import (
    read_json,
    recover_folder,
    remove_temporaries,
    save_atomically,
    write_json,
)
from albert_keras.layers.albert_dropout import dropout_states
from albert_keras.training.history_csv import write_history_rows
from albert_keras.training.nan_guard import nan_detected
from albert_keras.training.optimizer_steps import optimizer_updates

_WEIGHTS = "state.weights.h5"
_STATE = "state.json"
_LORA = "lora.npz"


class FinetuningState(keras.callbacks.Callback):
    """Best model, backups, early stopping and history of one run, crash-safe.

    After every epoch, in this order, each file through a temporary and a
    rename (`atomic_files`): `best.keras` if the monitored dev score improved;
    a backup folder `backup/epoch-NNNN/` with the weights and optimizer
    (`state.weights.h5`) and the run state (`state.json`: every epoch's logs,
    the best epoch and score, the epochs without improvement) and, with LoRA
    (`AlbertBackbone.enable_lora`), the adapters and unmerged kernels
    (`lora.npz`: a weights file holds the kernels with the adapters merged
    in, and loading it zeroes the adapters, which would stop them training);
    then `history.csv`, rewritten from that state. The last `keep` backups are
    kept. A kill at any point leaves the previous complete files; `restore`
    resumes from the newest backup that reads, falling back to the older one
    with a message. It replaces Keras' `BackupAndRestore`, `ModelCheckpoint`,
    `EarlyStopping` and `CSVLogger`, which write in place.

    Place it after `DevEvaluation` in the callbacks, so the dev scores are in
    the logs. An "epoch" here is one Keras epoch of `fit`: a pass over the
    data, or the updates between two evaluations under `--eval-every`
    (`unit` says which in messages). Each row also records `step`, the
    optimizer updates done when it was scored.

    Args:
        folder: the run's output folder.
        monitor: the log to maximize, e.g. "val_accuracy".
        patience: epochs without improvement before stopping.
        keep: backups kept (at least 2, so one is always whole).

    Example:
    >>> import tempfile
    >>> state = FinetuningState(tempfile.mkdtemp(), "val_accuracy", patience=2)
    >>> state.epochs_done, state.best_epoch
    (0, None)
    """

    def __init__(self, folder: str, monitor: str, patience: int = 2, keep: int = 2):
        super().__init__()
        self.folder = folder
        self.monitor = monitor
        self.patience = patience
        self.keep = max(keep, 2)
        self.best_path = os.path.join(folder, "best.keras")
        self.backup_dir = os.path.join(folder, "backup")
        self.rows: list[dict] = []
        self.best_epoch = None  # 0-based
        self.best = None
        self.wait = 0
        self.stopped = False
        self.resumed_after = 0  # epochs done before this process started
        self.unit = "epoch"  # or "evaluation" (--eval-every)

    @property
    def metric(self) -> str:
        """The dev score monitored, without the logs' "val_" prefix."""
        return self.monitor.removeprefix("val_")

    @property
    def epochs_done(self) -> int:
        return len(self.rows)

    @property
    def best_step(self) -> int | None:
        """The optimizer updates done at the best evaluation (None: none yet)."""
        if self.best_epoch is None:
            return None
        step = self.rows[self.best_epoch].get("step")  # older runs: none
        return None if step is None else int(step)

    def _backups(self) -> list[str]:
        """Backup folders, newest first."""
        if not os.path.isdir(self.backup_dir):
            return []
        names = sorted(
            (
                n
                for n in os.listdir(self.backup_dir)
                if n.startswith("epoch-") and n[6:].isdigit()
            ),
            reverse=True,
        )
        return [os.path.join(self.backup_dir, n) for n in names]

    def _state(self) -> dict:
        return {
            "random": [v.numpy().tolist() for v in dropout_states(self.model)],
            "rows": self.rows,
            "best_epoch": self.best_epoch,
            "best": self.best,
            "wait": self.wait,
            "stopped": self.stopped,
        }

    def _set_state(self, state: dict, model) -> None:
        for variable, value in zip(dropout_states(model), state["random"], strict=True):
            variable.assign(value)
        self.rows = state["rows"]
        self.best_epoch = state["best_epoch"]
        self.best = state["best"]
        self.wait = state["wait"]
        self.stopped = state["stopped"]

    def restore(self, model) -> bool:
        """Loads the newest readable backup into `model` (weights + optimizer).

        Returns:
            True if a backup was restored, False for a new run.
        """
        remove_temporaries(self.folder)
        remove_temporaries(self.backup_dir)
        # An epoch redone after a fallback replaces its backup folder by two
        # renames: a kill between them leaves `epoch-NNNN.old`, put back here.
        if os.path.isdir(self.backup_dir):
            for name in os.listdir(self.backup_dir):
                if name.endswith(".old"):
                    recover_folder(os.path.join(self.backup_dir, name[:-4]))
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        for index, path in enumerate(self._backups()):
            try:
                state = read_json(os.path.join(path, _STATE))
                model.load_weights(os.path.join(path, _WEIGHTS))
                _load_lora(model, os.path.join(path, _LORA))
            except Exception as error:  # noqa: BLE001 (any unreadable backup)
                _refuse_another_model(path, error)
                print(
                    f"Backup {path} cannot be read ({type(error).__name__}: "
                    f"{str(error)[:200]}); trying the one before it.",
                    flush=True,
                )
                continue
            if state is None:
                continue
            self._set_state(state, model)
            self.resumed_after = self.epochs_done
            # The state is the record: a history.csv write the kill cut short
            # is redone from it.
            write_history_rows(os.path.join(self.folder, "history.csv"), self.rows)
            if index:
                print(f"Resuming from the older backup {path}.", flush=True)
            return True
        return False

    def describe(self) -> str:
        """'Resuming after epoch N (best so far: epoch K, val_x = v)'; under
        --eval-every 'after evaluation N (step S) ...'."""
        step = self.rows[-1].get("step") if self.rows else None
        at = "" if self.unit == "epoch" or step is None else f" (step {int(step)})"
        done = f"{self.unit} {self.epochs_done}{at}"
        return f"Resuming after {done} (best so far: {self._best_text()})"

    def _best_text(self) -> str:
        if self.best_epoch is None:
            return "none yet"
        return f"{self.unit} {self.best_epoch + 1}, {self.monitor} = {self.best:.4f}"

    def on_epoch_end(self, epoch, logs=None):
        if nan_detected(self.model):
            return  # nothing of the stretch NanGuard stopped is kept
        logs = logs or {}
        row = {"epoch": int(epoch), "step": optimizer_updates(self.model.optimizer)}
        row.update({k: float(v) for k, v in logs.items() if keras.ops.ndim(v) == 0})
        self.rows = [r for r in self.rows if r["epoch"] < epoch] + [row]
        value = row.get(self.monitor)
        if (
            value is not None
            and math.isfinite(value)
            and (self.best is None or value > self.best)
        ):
            save_atomically(self.best_path, self._save_best)
            self.best, self.best_epoch, self.wait = value, int(epoch), 0
        else:
            self.wait += 1
        self.stopped = self.wait >= self.patience
        self._save_backup(epoch)
        write_history_rows(os.path.join(self.folder, "history.csv"), self.rows)
        if self.stopped:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if nan_detected(self.model):
            raise ValueError(
                "Fine-tuning stopped: the loss became NaN or infinite (see "
                "above), so the run is not finished; what it saved before is "
                f"kept (best: {self._best_text()}). Lower "
                "--learning-rate, raise the warmup (--warmup-fraction, "
                "--warmup-steps) or check the data, then run again with "
                "--force-resume (from there), --overwrite or another --output-dir."
            )

    def _save_best(self, path) -> None:
        """`model.save`; a LoRA model's uncompiled: its optimizer holds the
        adapters' state, which the saved model (adapters merged) has not, and
        every load of it warned "Skipping variable loading for optimizer"."""
        compiled = self.model.compiled
        self.model.compiled = compiled and not _lora_variables(self.model)
        try:
            self.model.save(path)
        finally:
            self.model.compiled = compiled

    def _save_backup(self, epoch) -> None:
        def save(folder):
            os.makedirs(folder)
            self.model.save_weights(os.path.join(folder, _WEIGHTS))
            _save_lora(self.model, os.path.join(folder, _LORA))
            write_json(os.path.join(folder, _STATE), self._state())

        os.makedirs(self.backup_dir, exist_ok=True)
        save_atomically(os.path.join(self.backup_dir, f"epoch-{epoch + 1:04d}"), save)
        for old in self._backups()[self.keep :]:
            shutil.rmtree(old, ignore_errors=True)

    def load_best(self, model) -> None:
        """Puts the best epoch's weights into `model` (if an epoch improved)."""
        if self.best_epoch is not None and os.path.isfile(self.best_path):
            model.load_weights(self.best_path)


def _refuse_another_model(path, error) -> None:
    """A backup of another model (its weights of other shapes) is no broken
    file: the older backups hold the same model, and falling back through
    them started a new run in the folder, quietly."""
    if isinstance(error, _OtherLora):
        raise ValueError(
            f"The backup {path} {error}: the run in this folder trained "
            "another model (another --lora-rank, which a resume cannot "
            "change). Start this one in another --output-dir, or pass "
            "--overwrite to replace that run."
        ) from None
    if isinstance(error, ValueError) and "shape" in str(error):
        raise ValueError(
            f"The backup {path} holds a model of other shapes than this run's "
            f"({str(error)[:160]}): the run in this folder trained another "
            "model (another label set, task, --init or --lora-rank). Start "
            "this one in another --output-dir, or pass --overwrite to replace "
            "that run."
        ) from None


class _OtherLora(ValueError):
    """A backup without this run's LoRA variables (`_load_lora`)."""


def _lora_variables(model) -> list:
    """Kernel, adapter A and adapter B of every LoRA-enabled layer, in order."""
    found = []
    for layer in model._flatten_layers():
        if getattr(layer, "lora_enabled", False):
            found += [layer._kernel, layer.lora_kernel_a, layer.lora_kernel_b]
    return found


def _save_lora(model, path) -> None:
    """Writes the LoRA variables (nothing without LoRA)."""
    variables = _lora_variables(model)
    if variables:
        with open(path, "wb") as f:
            np.savez(
                f,
                paths=np.array([v.path for v in variables]),
                **{
                    str(i): keras.ops.convert_to_numpy(v)
                    for i, v in enumerate(variables)
                },
            )


def _load_lora(model, path) -> None:
    """Puts back what `_save_lora` wrote; raises if a LoRA model has none."""
    variables = _lora_variables(model)
    if not variables:
        return
    if not os.path.isfile(path):
        raise _OtherLora("has no LoRA adapters (lora.npz): a full fine-tuning's")
    with np.load(path) as saved:
        paths = [str(p) for p in saved["paths"]]
        if paths != [v.path for v in variables]:
            raise _OtherLora(f"holds other LoRA variables: {paths[:3]}...")
        for i, variable in enumerate(variables):
            variable.assign(saved[str(i)])
