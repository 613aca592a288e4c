"""benchmarks/bench_accelerator.py: the smoke run on the CPU, JAX, no TensorFlow."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_accelerator.py")
# What the smoke run must have measured: ours with both optimizers, training
# and inference, keras-hub and HF eager.
EXPECTED = [
    "base-train-128/ours-lamb",
    "base-train-128/ours-adamw",
    "base-train-128/keras-hub",
    "base-train-128/hf-eager",
    "base-infer-128/ours",
    "base-infer-128/keras-hub",
    "base-infer-128/hf-eager",
]


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_accelerator", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(out, *args, timeout=300):
    """The script in a subprocess on JAX; its workers act as if TF were absent."""
    for name in ("jax", "torch", "transformers", "keras_hub"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the bench extra)")
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, SCRIPT, "--smoke", "--no-tensorflow", "--out", out]
    result = subprocess.run(
        [*command, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(out) as f:
        return result, json.load(f)


def test_flop_count_matches_a_hand_count():
    """`model_flops` against every matrix product counted out by hand."""
    sizes = dict(
        vocab_size=10,
        embedding_size=4,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=16,
    )
    batch, length, predictions = 2, 4, 1
    tokens = batch * length  # 8
    # Multiply-adds per token and layer: Q, K, V, output (4 x 8 x 8) and the
    # FFN (8 x 16 in, 16 x 8 out).
    projections = tokens * (4 * 8 * 8 + 8 * 16 + 16 * 8) * 2  # 8192
    # QK^T and PV: batch x T x T x H each, per layer.
    attention = 2 * (batch * 4 * 4 * 8) * 2  # 1024
    embedding = tokens * 4 * 8  # 256: E -> H projection
    head = batch * predictions * (8 * 4 + 4 * 10)  # 144: H -> E, E -> V
    forward_macs = projections + attention + embedding + head  # 9616
    assert forward_macs == 9616
    flops = bench_module().model_flops
    assert flops(sizes, batch, length, predictions) == 3 * 2 * forward_macs
    assert flops(sizes, batch, length) == 2 * (forward_macs - head)


# A worker made to fail in the smoke run: a job of its own (no other test
# reads it), the last one started, so that one run of the workers serves both
# the smoke test and the failing-worker test.
FAILING = "base-train-512/keras-hub"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """The smoke run (`run_bench`'s result and report), run once."""
    out = str(tmp_path_factory.mktemp("smoke") / "r.json")
    # The other workloads run the same code at the same smoke sizes.
    jobs = f"base-train-128,base-infer-128,{FAILING}"
    return run_bench(out, "--jobs", jobs, "--inject-failure", FAILING)


def test_smoke_run_times_every_implementation(smoke_run):
    result, report = smoke_run
    jobs = {job["name"]: job for job in report["jobs"]}
    assert report["finished"]
    failed = [n for n, j in jobs.items() if j["status"] != "ok"]
    assert failed == [FAILING], result.stdout
    for name in EXPECTED:
        job = jobs[name]
        assert job["ms_per_step"] > 0 and job["tflops"] > 0, job
        assert job["peak_memory_bytes"] > 0 and job["device"]
        assert job["tensorflow_imported"] is False, name
        seconds = job["ms_per_step"] / 1000
        assert job["tflops"] * 1e12 * seconds == pytest.approx(job["flops_per_step"])
    assert jobs["base-train-128/ours-lamb"]["attention"]["path"] in (
        "explicit",
        "fused",
    )
    assert jobs["base-infer-128/ours"]["library_versions"]["keras"]
    assert jobs["matmul"]["matmul_tflops"] > 0
    skipped = {s["name"] for s in report["skipped"]}
    assert skipped == {n for n in skipped if n.endswith("/hf-compile")} and skipped
    for header in ("base-train-128: training", "base-infer-128: inference"):
        assert header in result.stdout
    assert "ours LAMB / X" in result.stdout and "ours AdamW / X" in result.stdout
    assert "large matmul 1024^3 float32" in result.stdout


def test_a_failing_worker_is_recorded_and_the_run_goes_on(smoke_run, tmp_path):
    result, report = smoke_run
    status = {job["name"]: job["status"] for job in report["jobs"]}
    ok = {"matmul": "ok", **dict.fromkeys(EXPECTED, "ok")}
    assert status == {**ok, FAILING: "failed"}
    failed = report["jobs"][-1]
    assert failed["name"] == FAILING
    assert "injected failure" in failed["stderr_tail"]
    assert "injected failure" in result.stdout  # the progress line
    assert "ours / X" in result.stdout
    # Its workload's table lists it, failed.
    table = result.stdout.split("base-train-512: training")[1].splitlines()
    assert table[2].split() == ["keras-hub", "failed"], table
    out = str(tmp_path / "r.json")
    # A worker past --job-timeout is killed and recorded (the workers hang, so
    # however fast the machine, both run past it); past the budget, nothing
    # starts.
    args = ("--jobs", "base-infer-128/ours", "--job-timeout", "1", "--inject-hang")
    _, report = run_bench(out, *args)
    assert [job["status"] for job in report["jobs"]] == ["timeout", "timeout"]
    assert "killed after 1 s" in report["jobs"][0]["stderr_tail"]
    _, report = run_bench(out, "--jobs", "base-infer-128", "--budget-seconds", "0")
    assert report["jobs"] == [] and len(report["skipped"]) == 5


def test_dry_run_prints_the_plan_and_flops(tmp_path):
    result = subprocess.run(
        [sys.executable, SCRIPT, "--dry-run", "--remat", "--attention", "both"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines.index("  1 base-train-128/ours-lamb/fused") < lines.index(
        "  2 base-train-128/ours-lamb/explicit"
    )
    assert "xxlarge-train-512/ours-lamb/remat/fused" in result.stdout
    # ALBERT-base, 256 x 128, 20 predictions: 17.3 TFLOP per training step.
    assert "base-train-128     256 x 128 P=20" in result.stdout
    assert "1.73e+13 FLOP" in result.stdout


def test_key_length_variant_matches_the_reference(monkeypatch):
    """`--variants seqlen` times attention given key lengths: on right-padded
    rows it gives the official numbers (numpy reference)."""
    pytest.importorskip("jax")
    from albert_test_case import max_abs_diff
    from numpy_ops import attention, f64, randomize

    from albert_keras.layers import AlbertAttention, albert_attention

    layer = AlbertAttention(32, 4)
    x = np.random.default_rng(5).normal(size=(3, 8, 32)).astype("float32")
    mask = (np.arange(8)[None] < np.array([[8], [5], [2]])).astype("int32")
    layer(x, padding_mask=mask)
    randomize(layer, seed=5)
    monkeypatch.setattr(albert_attention, "FORCE_ATTENTION_PATH", "fused")
    monkeypatch.setattr(
        AlbertAttention, "_fused_attention", bench_module()._key_length_attention
    )
    out = np.asarray(layer(x, padding_mask=mask))
    assert max_abs_diff(out, attention(layer, f64(x), mask)) < 1e-5


def test_variants_are_named_in_the_plan_and_unknown_ones_refused():
    command = [sys.executable, SCRIPT, "--dry-run", "--jobs", "base-infer-128"]
    result = subprocess.run(
        [*command, "--variants", "qkv3,seqlen"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    names = [line.split()[1] for line in result.stdout.splitlines()[2:7]]
    assert names == [
        "matmul",
        "base-infer-128/ours",
        "base-infer-128/ours+qkv3",
        "base-infer-128/ours+seqlen",
        "base-infer-128/keras-hub",
    ]
    assert "keras-hub+" not in result.stdout
    result = subprocess.run(
        [*command, "--variants", "fast"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2 and "unknown --variants ['fast']" in result.stderr


def test_jobs_matching_nothing_are_refused():
    with pytest.raises(SystemExit, match="matches no job; the jobs: base-train-128"):
        bench_module().main(["--jobs", "base-trian", "--dry-run"])


def test_without_an_accelerator_it_stops_after_the_matmul(tmp_path, monkeypatch):
    """The full sizes on a CPU would only time out, job after job."""
    bench = bench_module()
    out = str(tmp_path / "r.json")
    args = bench.parse_args(["--out", out])
    ran = []

    def cpu_worker(job, timeout, env):
        ran.append(job["name"])
        matmul = dict(matmul_size=1024, matmul_dtype="float32", matmul_tflops=0.1)
        return dict(
            status="ok", wall_seconds=1.0, device="cpu", platform="cpu", **matmul
        )

    monkeypatch.setattr(bench, "run_worker", cpu_worker)
    with pytest.raises(SystemExit, match="--smoke"):
        bench.run_all(bench.plan_jobs(args), args)
    assert ran == ["matmul"]
    with open(out) as f:
        report = json.load(f)
    assert [job["name"] for job in report["jobs"]] == ["matmul"]
    assert not report["finished"]
