"""The official TF1 code as the converter tests' oracle, run in its own processes.

Helpers the tests import (`from converter_oracle import ...`); conftest.py
registers the `official` fixture and the summary hook. `official` reads the
folders `tests/oracle/official_oracle.py make` writes once per session for
every case of `tests/oracle/cases.py` (`official_cases.py`, shared by the
xdist workers); `run_official` runs the oracle's `run` on several
checkpoints in one more subprocess (`tests/oracle/oracle_runs.py`). The
oracle switches TensorFlow to TF1 graph mode, so it never runs in the test
process.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ORACLE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "oracle")
RUNS = os.path.join(ORACLE_DIR, "oracle_runs.py")
if ORACLE_DIR not in sys.path:
    sys.path.insert(0, ORACLE_DIR)

import cases  # noqa: E402  (tests/oracle/cases.py)
from official_cases import official_cases  # noqa: E402

CASES = cases.CASES
BASE_CONFIG = cases.BASE  # the albert_config.json fields the cases start from

INPUT_KEYS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
# case -> {output: max abs diff}, filled by the exactness tests and printed
# in the terminal summary (the README's figures come from there).
MEASURED = {}


@pytest.fixture(scope="session")
def official(tmp_path_factory):
    """{case name: folder} written by the official code (+ `<case>_hub*` folders)."""
    out = official_cases(tmp_path_factory)["dir"]
    folders = {}
    for case in CASES:
        folders[case["name"]] = os.path.join(out, case["name"])
        if case.get("hub_module"):
            for suffix in ("_hub", "_hub_prefixed"):
                name = case["name"] + suffix
                folders[name] = os.path.join(out, name)
    return folders


def run_official(jobs, folder):
    """Runs the oracle's `run` for each job in one process.

    Args:
        jobs: list of argument lists for `official_oracle.py run`, without the
            leading "run" (e.g. ["--ckpt", prefix, "--config", ..., "--out", ...]).
        folder: where to put the job list.
    """
    path = os.path.join(folder, "oracle_jobs.json")
    with open(path, "w") as f:
        json.dump([["run", *map(str, job)] for job in jobs], f)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, RUNS, path], capture_output=True, text=True, env=env
    )
    if result.returncode:
        raise RuntimeError(f"official oracle run failed:\n{result.stderr[-3000:]}")
    statuses = json.loads(result.stdout.strip().splitlines()[-1])
    for job, status in zip(jobs, statuses, strict=True):
        if status["returncode"]:
            raise RuntimeError(
                f"official oracle run {job} failed:\n{status['stderr'][-3000:]}"
            )


def load_outputs(folder):
    with np.load(os.path.join(folder, "outputs.npz")) as data:
        return dict(data)


def save_inputs(outputs, path):
    np.savez(path, **{k: outputs[k] for k in INPUT_KEYS})
    return path


def official_inputs(outputs):
    """Our model inputs for the oracle's input arrays."""
    return {
        "token_ids": outputs["input_ids"],
        "segment_ids": outputs["segment_ids"],
        "padding_mask": outputs["input_mask"],
        "mask_positions": outputs["masked_lm_positions"],
    }


def pytest_terminal_summary(terminalreporter):
    if not MEASURED:
        return
    terminalreporter.section("max abs diff vs the official TF1 code (float32)")
    for case, diffs in MEASURED.items():
        worst = max(diffs, key=diffs.get)
        terminalreporter.write_line(
            f"{case:28s} max {diffs[worst]:.2e} ({worst}); "
            + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
        )
