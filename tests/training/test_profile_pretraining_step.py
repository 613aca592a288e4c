"""benchmarks/profile_pretraining_step.py: a jax.profiler trace of fit steps, summed."""

import json
import os
import subprocess
import sys

from albert_test_case import fast_xla_flags

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def test_smoke_profile_sums_the_traced_operations(tmp_path):
    out = tmp_path / "profile.json"
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    # XLA without LLVM's optimizations: the compile is most of the run, and
    # what is summed (the traced operations) is there all the same.
    env["XLA_FLAGS"] = fast_xla_flags()
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/profile_pretraining_step.py",
            "--smoke",
            "--trace-dir",
            str(tmp_path / "trace"),
            "--out",
            str(out),
        ],  # fmt: skip
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["source"] == "XLA CPU operations"
    assert 0 < summary["ms_per_step"] < 1000
    assert abs(sum(summary["kinds"].values()) - 1) < 1e-6
    assert summary["kinds"].get("matmul", 0) > 0.05  # the dots were found
    assert "top operations" in result.stdout
