"""Runs the official TF1 code once per session: checkpoints + official outputs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ORACLE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "oracle")
sys.path.insert(0, ORACLE_DIR)

from cases import CASES  # noqa: E402

ORACLE = os.path.join(ORACLE_DIR, "official_oracle.py")


def run_oracle(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, ORACLE, *args], capture_output=True, text=True, env=env
    )
    if result.returncode:
        raise RuntimeError(f"official oracle failed:\n{result.stderr[-3000:]}")


@pytest.fixture(scope="session")
def official(tmp_path_factory):
    """{case name: folder} of checkpoints the official code wrote."""
    out = tmp_path_factory.mktemp("official")
    spec = out / "spec.json"
    spec.write_text(json.dumps(CASES))
    run_oracle("make", "--spec", str(spec), "--out", str(out))
    return {case["name"]: str(out / case["name"]) for case in CASES}


def official_inputs(outputs):
    return {
        "token_ids": outputs["input_ids"],
        "segment_ids": outputs["segment_ids"],
        "padding_mask": outputs["input_mask"],
        "mask_positions": outputs["masked_lm_positions"],
    }


def load_outputs(folder):
    return dict(np.load(os.path.join(folder, "outputs.npz")))
