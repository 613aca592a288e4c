"""`albert-keras` starts TensorFlow without its start-up lines on stderr."""

import os
import re
import subprocess
import sys

from albert_keras.quiet_start import STARTUP_NOISE, _stderr_without

# A glog/absl line: severity, date, time, thread, file:line]
LOG_LINE = re.compile(r"^[IWEF]\d{4} ")


def _python(code, **env):
    """Runs `code` in a fresh Python with the environment of a user's shell
    (without the TF_CPP_MIN_LOG_LEVEL=3 of conftest.py), plus `env`."""
    environ = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**environ, **env},
        timeout=120,
    )


def test_a_command_that_starts_tensorflow_prints_only_its_own_lines(tmp_path):
    missing = str(tmp_path / "albert_config.json")
    run = _python(
        "import sys\n"
        "from albert_keras.cli import main\n"
        f"code = main(['info', '--config', {missing!r}])\n"
        "print('tensorflow' in sys.modules, 'tensorflow' in sys.modules and "
        "bool(sys.modules['tensorflow'].config.list_physical_devices('CPU')))\n"
        "sys.exit(code)\n"
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout.split() == ["True", "True"]  # TensorFlow started
    lines = run.stderr.splitlines()
    assert lines == [f"albert-keras info: error: {lines[0].split('error: ')[1]}"]
    assert "albert_config.json" in lines[0]
    for line in lines:
        assert not LOG_LINE.match(line) and not any(n in line for n in STARTUP_NOISE)


def test_a_users_log_level_wins():
    code = (
        "import os, sys\n"
        "from albert_keras.quiet_start import start_tensorflow_quietly\n"
        "start_tensorflow_quietly()\n"
        "print('tensorflow' in sys.modules, os.environ['TF_CPP_MIN_LOG_LEVEL'])\n"
    )
    # 0 or 1 asks for TensorFlow's logs: nothing is imported or filtered here.
    run = _python(code, TF_CPP_MIN_LOG_LEVEL="1")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "1"]


def test_only_the_start_up_noise_is_held_back(capfd):
    with _stderr_without(STARTUP_NOISE):
        os.write(2, b"I0000 00:00:1.0  1 cudart_stub.cc:31] Could not find cuda\n")
        os.write(2, b"E0000 00:00:2.0  1 real_error.cc:1] out of memory\n")
        print("a Python warning", file=sys.stderr)
    err = capfd.readouterr().err
    assert "cudart_stub" not in err
    assert "real_error.cc:1] out of memory" in err and "a Python warning" in err
