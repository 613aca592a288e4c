"""`albert-keras pretrain` on JAX without TensorFlow (for test_pretrain_jax.py).

Usage: python jax_pretrain_job.py WORK_DIR [NAME ...]

Runs in a process where `import tensorflow` fails (as on a JAX-only GPU
machine), with KERAS_BACKEND=jax and, for the multi-device runs,
XLA_FLAGS=--xla_force_host_platform_device_count=8 set by the caller. Each
NAME is a run of the command in WORK_DIR/NAME on WORK_DIR/train.txt:

- one: one device;
- data: `--distribution data` over the 8 devices;
- model: `--distribution model --model-shards 4` (a 2 x 4 mesh);
- killed: one device, killed by an exception after step 7 (a fault at a
  step end, not a timed kill), then the same command again (it resumes);
- torch: one device, for a caller that sets KERAS_BACKEND=torch.

The final pretrainer outputs on a fixed batch of the runs a test compares
(one, model, torch) go to WORK_DIR/NAME/outputs.npz; a JSON line reports
what happened, with the XLA compilations of each run after its first
epoch. Only the killed run draws its curves.png (the only one a test looks
at).
"""

import contextlib
import json
import os
import sys

sys.modules["tensorflow"] = None  # as on a machine with JAX only

import keras  # noqa: E402
import numpy as np  # noqa: E402

import albert_keras.pretraining.pretraining_run as pretraining_run  # noqa: E402
from albert_keras.cli import main  # noqa: E402

FLAGS = [
    "--preset", "albert_tiny", "--steps", "10", "--batch-size", "16",
    "--save-every", "5", "--steps-per-epoch", "5", "--max-seq-length", "32",
    "--max-predictions-per-seq", "5", "--held-out-every", "4",
    "--learning-rate", "0.01", "--warmup-steps", "2",
]  # fmt: skip
EXTRA = {
    "one": [],
    "data": ["--distribution", "data"],
    "model": ["--distribution", "model", "--model-shards", "4"],
    "killed": [],
    "torch": [],  # run with KERAS_BACKEND=torch
}
KILL_AT = 7
# The runs whose outputs.npz a test compares with TensorFlow's outputs.
OUTPUTS_READ = ("one", "model", "torch")


class Killed(Exception):
    pass


class KillAt(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) == KILL_AT:
            raise Killed(f"killed at step {KILL_AT}")


# One entry per XLA compilation; the event also fires for a program read
# from JAX's persistent compilation cache (which the caller may set).
COMPILES = []


def _count_compile(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration":
        COMPILES.append(event)


class CompilesAfterFirstEpoch(keras.callbacks.Callback):
    """XLA compilations after the first epoch (0: every step, every held-out
    evaluation reuses its program, as a TPU wants)."""

    def __init__(self, report):
        super().__init__()
        self.report = report

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 1:
            self.start = len(COMPILES)

    def on_train_end(self, logs=None):
        if keras.backend.backend() == "jax":
            compiles = len(COMPILES) - self.start
            self.report["compiles_after_first_epoch"] = compiles


def run(work, name, extra=()):
    argv = ["pretrain", "--input", os.path.join(work, "train.txt")]
    argv += ["--output-dir", os.path.join(work, name), *FLAGS, *EXTRA[name]]
    if name == "killed":  # the one run whose curves.png a test looks at
        return main([*argv, *extra])
    with without_curves():
        return main([*argv, *extra])


@contextlib.contextmanager
def without_curves():
    """The command's callbacks less `curves.png` (seconds of plotting per
    epoch that only the killed run's test looks at)."""
    from albert_keras.training.loss_curve_plot import LossCurvePlot

    callbacks = pretraining_run._callbacks
    pretraining_run._callbacks = lambda *args: [
        c for c in callbacks(*args) if not isinstance(c, LossCurvePlot)
    ]
    try:
        yield
    finally:
        pretraining_run._callbacks = callbacks


@contextlib.contextmanager
def extra_callback(callback):
    """`callback` after the command's own callbacks (the fault or the counter)."""
    callbacks = pretraining_run._callbacks
    pretraining_run._callbacks = lambda *args: callbacks(*args) + [callback]
    try:
        yield
    finally:
        pretraining_run._callbacks = callbacks


def killed_then_resumed(work):
    try:
        with extra_callback(KillAt()):
            run(work, "killed")
        raise AssertionError("the run was not killed")
    except Killed as error:
        message = str(error)
    keras.backend.clear_session()
    return message, run(work, "killed")


def save_outputs(folder):
    """The pretrainer's outputs on a fixed batch, computed here (JAX)."""
    model = keras.saving.load_model(os.path.join(folder, "pretrainer.keras"))
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(5, 1000, (2, 32)).astype("int32"),
        "segment_ids": np.repeat([[0] * 16 + [1] * 16], 2, 0).astype("int32"),
        "padding_mask": np.ones((2, 32), "int32"),
        "mask_positions": np.array([[1, 3, 5, 7, 9]] * 2, "int32"),
    }
    y = model.predict(x, verbose=0)
    np.savez(os.path.join(folder, "outputs.npz"), **x, **y)


def main_job(work, names):
    if keras.backend.backend() == "jax":
        import jax

        jax.monitoring.register_event_duration_secs_listener(_count_compile)
    report = {}
    if keras.backend.backend() == "jax":  # (keras.distribution is JAX's)
        report["devices"] = len(keras.distribution.list_devices())
    for name in names:
        if name == "killed":
            report["killed"], code = killed_then_resumed(work)
        else:
            counter = CompilesAfterFirstEpoch(report.setdefault(name, {}))
            with extra_callback(counter):
                code = run(work, name)
        assert code == 0, (name, code)
        if name in OUTPUTS_READ:
            save_outputs(os.path.join(work, name))
        keras.backend.clear_session()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main_job(sys.argv[1], sys.argv[2:])
