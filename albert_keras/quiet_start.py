"""`start_tensorflow_quietly`: the commands start TensorFlow without its noise.

`albert-keras` and `albert-convert` call it once their arguments are parsed,
and run under `plain_warnings`. It sits at the bottom of the package: it
imports nothing of ours.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings

# What TensorFlow, XLA and CUDA print on stderr as they start, on a machine
# without a GPU too: lines logged before absl's logging is set up (which
# TF_CPP_MIN_LOG_LEVEL cannot silence), the CPU-feature notice, the failed
# cuInit (an error line, hidden only by TF_CPP_MIN_LOG_LEVEL=3, which would
# hide real errors as well) and the CUDA plugins registered twice.
STARTUP_NOISE = (
    "All log messages before absl::InitializeLog() is called",
    "cudart_stub.cc",
    "cpu_feature_guard.cc",
    "To enable the following instructions:",
    "failed call to cuInit",
    "Unable to register cuDNN factory",
    "Unable to register cuFFT factory",
    "Unable to register cuBLAS factory",
    "computation placer already registered",
    "TF-TRT Warning",
    "oneDNN custom operations are on",
)


@contextlib.contextmanager
def _stderr_without(noise):
    """Holds what is written to file descriptor 2 (C++ logs too) and writes it
    back without the lines that contain one of `noise`."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode("utf-8", "replace").splitlines(keepends=True)
            sys.stderr.write("".join(s for s in lines if not _has(s, noise)))
            sys.stderr.flush()


def _has(line, noise):
    return any(n in line for n in noise)


def start_tensorflow_quietly() -> None:
    """Imports TensorFlow and starts its devices without `STARTUP_NOISE`, and
    from then on without its C++ INFO and WARNING lines (TF_CPP_MIN_LOG_LEVEL=2,
    the package's default: errors still show).

    A user's TF_CPP_MIN_LOG_LEVEL=0 or 1 (to see TensorFlow's logs) wins:
    nothing is filtered. Nothing happens when TensorFlow is already imported.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.environ["TF_CPP_MIN_LOG_LEVEL"] in ("0", "1") or "tensorflow" in sys.modules:
        return
    with _stderr_without(STARTUP_NOISE):
        try:
            import tensorflow as tf
        except ImportError:  # a Keras backend without TensorFlow
            return
        tf.config.list_physical_devices()  # CUDA's start logs too (cuInit)


# Where our warnings come from (the two packages lie side by side, installed
# or not): a warning of another library keeps Python's form.
OUR_PACKAGES = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
    + os.sep
    for name in ("albert_keras", "checkpoints_convert")
)


@contextlib.contextmanager
def plain_warnings(command: str):
    """Within the block, a warning of this package prints as one line on
    stderr, `COMMAND: warning: message`, as the commands' own warnings do:
    not Python's file, line number and source line (each text once).

    Args:
        command: what starts the line (`albert-convert`).

    A caller's recording `catch_warnings(record=True)` (`pytest.warns`)
    around the block does not see our warnings: they are printed.

    Example:
    >>> with contextlib.redirect_stderr(sys.stdout), plain_warnings("cmd"):
    ...     warnings.warn_explicit("look", UserWarning, OUR_PACKAGES[0] + "x.py", 1)
    cmd: warning: look
    """
    shown = set()
    python_form = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not os.path.abspath(filename).startswith(OUR_PACKAGES):
            python_form(message, category, filename, lineno, file, line)
        elif str(message) not in shown:
            shown.add(str(message))
            print(f"{command}: warning: {message}", file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def run_in_tensorflow_process(code: str, args: list[str], check: bool = True) -> int:
    """Runs Python `code` with `sys.argv[1:] == args` in a new process on the
    TensorFlow backend, TensorFlow started quietly; returns its exit status.

    For what only TensorFlow can write (SavedModels with string ops, LiteRT
    files) from a run on JAX or torch, which saved a `.keras` first.

    Args:
        code: Python source.
        args: its command-line arguments.
        check: raise `subprocess.CalledProcessError` if it fails.

    Example:
    >>> run_in_tensorflow_process("import sys; sys.exit(len(sys.argv))", ["a"], False)
    2
    """
    import subprocess

    start = "from albert_keras.quiet_start import start_tensorflow_quietly as s; s()\n"
    env = dict(os.environ, KERAS_BACKEND="tensorflow")
    command = [sys.executable, "-c", start + code, *args]
    return subprocess.run(command, env=env, check=check).returncode


def rerun_on_tensorflow(argv: list[str]) -> int:
    """The `albert-keras` command `argv` again, in a process on the TensorFlow
    backend (what only TensorFlow runs: LiteRT files, the text models'
    tokenizer ops); its exit status."""
    code = "import sys; from albert_keras.cli import main; sys.exit(main(sys.argv[1:]))"
    return run_in_tensorflow_process(code, argv, check=False)
