"""The official oracle's checkpoints of every case, made once per test session.

`official_oracle.py make` of all `cases.CASES` costs one TensorFlow (TF1
mode) process of about 8 CPU-seconds. The converter tests and the oracle's
self-check read the same folders, and pytest-xdist runs session fixtures once
per worker, so the folders are made once under the session's shared base
directory, the first worker holding a file lock while it writes them (the
pytest-xdist documented pattern), and every later caller reads them.
"""

import json
import os
import subprocess
import sys
import time

import filelock
from cases import CASES

ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "official_oracle.py")


def _make(out):
    """Runs `official_oracle.py make` for every case into `out` (a new folder)."""
    os.makedirs(out)
    spec = os.path.join(out, "spec.json")
    with open(spec, "w") as f:
        json.dump(CASES, f)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, ORACLE, "make", "--spec", spec, "--out", out],
        capture_output=True,
        text=True,
        env=env,
    )
    if result.returncode:
        raise RuntimeError(f"official oracle make failed:\n{result.stderr[-3000:]}")


def official_cases(tmp_path_factory) -> dict:
    """{"dir": the folder of one subfolder per case, "seconds": the make's wall time}.

    Args:
        tmp_path_factory: pytest's fixture; under xdist its base directory's
            parent is shared by the workers of one session.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    out = os.path.join(str(root), "official_cases")
    made = os.path.join(out, "made.json")
    with filelock.FileLock(os.path.join(str(root), "official_cases.lock")):
        if not os.path.isfile(made):
            start = time.perf_counter()
            _make(out)
            with open(made, "w") as f:
                json.dump({"seconds": time.perf_counter() - start}, f)
    with open(made) as f:
        return {"dir": out, "seconds": json.load(f)["seconds"]}
