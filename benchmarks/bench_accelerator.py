"""Accelerator benchmark: albert-keras vs keras-hub vs HF transformers, one command.

Times, on whatever accelerator is there, each implementation in a fresh
subprocess of this script (`--worker`, one JSON line back on stdout):

- ours: `AlbertPretrainer` (MLM + SOP) trained with `model.fit` and
  `steps_per_execution`, as `albert-keras pretrain` trains, once with its LAMB
  (`create_optimizer("lamb")`: `FastLamb`, warmup + decay, weight decay,
  clipping) and once with `keras.optimizers.AdamW` (`create_optimizer("adamw")`);
  and the `AlbertBackbone` forward pass (a jit-compiled `stateless_call` on JAX);
- keras-hub on the same Keras backend: `AlbertMaskedLM` (MLM only: keras-hub
  has no SOP) with `keras.optimizers.Lamb`, and its `AlbertBackbone` forward;
- HF transformers (PyTorch): `AlbertForPreTraining` (MLM + SOP) with
  `torch.optim.AdamW` (fused on CUDA) under bf16 autocast, eager and
  `torch.compile`d; `AlbertModel` under `torch.inference_mode()`, eager and
  compiled.

All with random init, dropout 0, mixed bfloat16, vocabulary 30000:
ALBERT-base training at 256 x 128 (20 predictions) and 32 x 512 (76),
ALBERT-xxlarge training at 64 x 128, base inference at 128 x 128; with
`--remat`, xxlarge at 32 x 512, ours with LAMB, with and without gradient
checkpointing (the `keras.RematScope` of `albert-keras pretrain
--gradient-checkpointing`). Every job reports median ms/step (whole `fit`
calls of `--steps-per-execution` x `--executions-per-call` steps, after one
call that compiles; the same number of steps for torch, between
`torch.cuda.synchronize()`s), seq/s, tokens/s, model TFLOP/s (`model_flops`,
one formula for all), peak memory, the device and library versions; tables
per size print our speed ratio to each peer, beside the card's large-matmul
rate. The JSON (`--out`) is rewritten after every job, so a killed run keeps
what it measured; a failed or timed-out worker is recorded with the end of
its stderr and the run goes on; jobs not started within `--budget-seconds`
are listed as skipped.

    KERAS_BACKEND=jax python benchmarks/bench_accelerator.py --out results.json
    KERAS_BACKEND=jax python benchmarks/bench_accelerator.py --dry-run   # the plan
    KERAS_BACKEND=jax python benchmarks/bench_accelerator.py --smoke     # CPU

`--smoke` runs every job but the `torch.compile` ones at one tiny size on the
CPU (2.5 minutes on 2 cores). `--jobs base,matmul` runs a subset (names or
substrings; the matmul always runs); `--attention both` times our jobs on
the fused and the explicit attention path. No TensorFlow is needed, nor
imported: `--no-tensorflow` makes the workers act as if it were not
installed. keras-hub trains through `keras.Model.fit`: its own `fit` needs
grain or TensorFlow to batch arrays.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import os
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

RESULT_MARK = "BENCH_ACCELERATOR_RESULT "
POLICY = "mixed_bfloat16"
LIBRARIES = ("albert-keras", "keras", "keras-hub", "jax", "jaxlib", "torch")
LIBRARIES += ("transformers", "numpy")
# name: preset, batch, length, masked predictions (None: inference).
WORKLOADS = {
    "base-train-128": ("albert_base_v2", 256, 128, 20),
    "base-infer-128": ("albert_base_v2", 128, 128, None),
    "base-train-512": ("albert_base_v2", 32, 512, 76),
    "xxlarge-train-128": ("albert_xxlarge_v2", 64, 128, 20),
    "xxlarge-train-512": ("albert_xxlarge_v2", 32, 512, 76),
}
# --smoke: every workload at one tiny size a 2-core CPU runs in seconds (the
# same code paths; equal shapes let JAX's compilation cache serve later jobs).
SMOKE_SIZES = dict(
    vocab_size=1000,
    embedding_size=32,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=128,
)
SMOKE_BATCH, SMOKE_LENGTH, SMOKE_PREDICTIONS = 4, 32, 5
# The `AlbertConfig` fields a job carries (its "sizes"): those of `SMOKE_SIZES`.
SIZE_FIELDS = tuple(SMOKE_SIZES)
# Cheaper CPU code generation: a training step compiles in 9 s instead of 20.
SMOKE_XLA_FLAGS = (
    "--xla_backend_optimization_level=0",
    "--xla_llvm_disable_expensive_passes=true",
)
TRAIN = ("ours-lamb", "ours-adamw", "keras-hub", "hf-compile", "hf-eager")
INFER = ("ours", "keras-hub", "hf-compile", "hf-eager")
PLAN = [
    ("base-train-128", TRAIN),
    ("base-infer-128", INFER),
    ("base-train-512", TRAIN),
    ("xxlarge-train-128", ("ours-lamb", "keras-hub", "hf-eager")),
]
SHORT = dict(
    vocab_size="V",
    embedding_size="E",
    hidden_size="H",
    num_hidden_layers="L",
    num_attention_heads="heads",
    intermediate_size="I",
)
# `--variants`: changes to our step tried on the accelerator before the
# product takes one; each adds a run of every job of ours, named `...+NAME`.
VARIANTS = {
    "qkv3": "Q, K and V as three products (`FORCE_QKV_PROJECTION`)",
    "cublaslt": "XLA_FLAGS=--xla_gpu_enable_cublaslt=true (GEMM epilogues)",
    "seqlen": "cuDNN attention given key lengths instead of a mask (JAX)",
}
LABELS = {
    "ours-lamb": "ours LAMB",
    "ours-adamw": "ours AdamW",
    "ours": "ours",
    "keras-hub": "keras-hub",
    "hf-compile": "HF compile",
    "hf-eager": "HF eager",
}


def model_flops(sizes: dict, batch: int, length: int, predictions=None) -> float:
    """Model FLOPs of one step (one batch), the same count for every implementation.

    Forward, matrix products only, 2 FLOPs per multiply-add:
    - encoder projections: 2 x tokens x (4 H^2 + 2 H I) per layer (query, key,
      value, output, FFN in and out), times L (ALBERT shares the weights,
      not the work);
    - attention scores and context: 4 x batch x T^2 x H per layer, times L;
    - embedding projection E -> H: 2 x tokens x E x H;
    - with `predictions` (training): the MLM head on the predicted positions
      only, 2 x batch x predictions x (H x E + E x V).
    Training counts 3 x forward (the backward pass is twice the forward);
    inference (`predictions=None`) is the backbone's forward. Left out: the
    pooler and SOP head (one row), layer norms, softmax, GELU and lookups. An
    implementation that computes more (HF's MLM head on every position) or
    less (ours: the last layer only at [CLS] and the masked rows) gets the
    same count, so TFLOP/s ranks as seq/s does.

    Example:
    >>> sizes = dict(vocab_size=10, embedding_size=4, hidden_size=8,
    ...              num_hidden_layers=1, intermediate_size=16)
    >>> model_flops(sizes, batch=1, length=2)
    2304.0
    """
    h, i = sizes["hidden_size"], sizes["intermediate_size"]
    e, v = sizes["embedding_size"], sizes["vocab_size"]
    layers = sizes["num_hidden_layers"]
    tokens = batch * length
    forward = 2 * tokens * (4 * h * h + 2 * h * i) * layers
    forward += 4 * batch * length * length * h * layers
    forward += 2 * tokens * e * h
    if predictions is None:
        return float(forward)
    forward += 2 * batch * predictions * (h * e + e * v)
    return 3.0 * forward


# --- the plan -----------------------------------------------------------------


def workload_shape(workload: str, smoke: bool) -> dict:
    """Preset, model sizes, batch, length and predictions of a workload."""
    from albert_keras.presets import preset_values

    preset, batch, length, predictions = WORKLOADS[workload]
    sizes = {k: preset_values(preset)[k] for k in SIZE_FIELDS}
    if smoke:
        sizes, batch, length = dict(SMOKE_SIZES), SMOKE_BATCH, SMOKE_LENGTH
        predictions = predictions and SMOKE_PREDICTIONS
    return dict(
        preset=preset,
        sizes=sizes,
        batch=batch,
        length=length,
        predictions=predictions,
        flops_per_step=model_flops(sizes, batch, length, predictions),
    )


def plan_jobs(args) -> list[dict]:
    """Every job spec in run order, most important first (matmul, then PLAN)."""
    plan = list(PLAN)
    if args.remat:
        plan.append(("xxlarge-train-512", ("ours-lamb", "ours-lamb/remat")))
    attention = ["fused", "explicit"] if args.attention == "both" else [args.attention]
    jobs = [dict(name="matmul", workload=None, impl="matmul")]
    for workload, impls in plan:
        shape = workload_shape(workload, args.smoke)
        for impl in impls:
            base, _, remat = impl.partition("/")
            ours = base.startswith("ours")
            paths = attention if ours else [None]
            variants = [None, *args.variants] if ours else [None]
            for path, variant in itertools.product(paths, variants):
                suffix = "" if path in (None, "auto") else f"/{path}"
                suffix += f"+{variant}" if variant else ""
                name = f"{workload}/{impl}{suffix}"
                job = dict(name=name, workload=workload, impl=base, **shape)
                job.update(attention=path, remat=bool(remat), variant=variant)
                jobs.append(job)
    for job in jobs:
        job.update(
            smoke=args.smoke,
            steps_per_execution=args.steps_per_execution,
            steps=args.steps_per_execution * args.executions_per_call,
            repeats=args.repeats,
            no_tensorflow=args.no_tensorflow,
            inject_failure=bool(
                args.inject_failure and args.inject_failure in job["name"]
            ),
            inject_hang=args.inject_hang,
        )
    return jobs


def selected(jobs: list[dict], patterns: str | None) -> list[dict]:
    """The matmul job and the jobs whose name contains one of `patterns`."""
    if not patterns:
        return jobs
    tokens = [p.strip() for p in patterns.split(",") if p.strip()]
    return [
        j for j in jobs if j["name"] == "matmul" or any(t in j["name"] for t in tokens)
    ]


# --- the parent ---------------------------------------------------------------


def worker_env(smoke: bool, cache_dir: str | None) -> dict:
    """The workers' environment: JAX by default, this tree importable.

    With `cache_dir`, JAX's persistent compilation cache is shared by the
    workers of this run: a worker compiles only what no earlier one did
    (variable initializers, the smoke run's equal shapes). Timed steps are
    unaffected; compile seconds shrink. Smoke runs also compile with LLVM
    optimizations off, which halves the CPU compile of a training step.
    """
    env = dict(os.environ)
    env.setdefault("KERAS_BACKEND", "jax")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # One worker at a time holds the GPU: let JAX use most of it.
    env.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.92")
    if cache_dir:
        env.setdefault("JAX_COMPILATION_CACHE_DIR", cache_dir)
        env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
        env.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
    if smoke:
        flags = [env.get("XLA_FLAGS", ""), *SMOKE_XLA_FLAGS]
        env["XLA_FLAGS"] = " ".join(flags).strip()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return env


def run_worker(job: dict, timeout: float, env: dict) -> dict:
    """Runs one job in a fresh process; its result, or why it failed.

    The worker runs in a session of its own, so a timeout kills it with its
    children (torch.compile's compile workers).
    """
    command = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(job)]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    status = "ok"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        status = "timeout"
    lines = [x for x in out.splitlines() if x.startswith(RESULT_MARK)]
    result = json.loads(lines[-1][len(RESULT_MARK) :]) if lines else {}
    if status == "ok" and (proc.returncode != 0 or not lines):
        status = "failed"
    result.update(status=status, wall_seconds=time.perf_counter() - start)
    if status != "ok":
        result["returncode"] = proc.returncode
        result["stderr_tail"] = "\n".join(err.splitlines()[-25:])
        if status == "timeout":
            result["stderr_tail"] += f"\n[killed after {timeout:.0f} s]"
    return result


def with_rates(job: dict, result: dict) -> dict:
    """The job, its worker's result and the rates derived from ms per step."""
    entry = {k: v for k, v in job.items() if not k.startswith("inject_")}
    entry.update(result)
    ms = result.get("ms_per_step")
    if entry["status"] == "ok" and ms and job["workload"]:
        per_s = 1000.0 / ms
        entry["seq_per_s"] = job["batch"] * per_s
        entry["tokens_per_s"] = job["batch"] * job["length"] * per_s
        entry["tflops"] = job["flops_per_step"] * per_s / 1e12
    return entry


def versions() -> dict:
    """Installed versions of the libraries compared (None: not installed)."""
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def run_all(jobs: list[dict], args) -> dict:
    """Runs the jobs in order within the budget, rewriting `--out` after each."""
    from albert_keras.atomic_files import write_json

    report = dict(
        command=sys.argv,
        settings=vars(args),
        host=platform.node(),
        python=platform.python_version(),
        versions=versions(),
        started=time.strftime("%Y-%m-%d %H:%M:%S"),
        jobs=[],
        skipped=[],
        finished=False,
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench_accelerator_jax_") as cache:
        env = worker_env(args.smoke, None if args.no_compile_cache else cache)
        report = run_jobs(jobs, args, report, env)
    report["finished"] = True
    write_json(args.out, report)
    return report


def run_jobs(jobs: list[dict], args, report: dict, env: dict) -> dict:
    """Runs the jobs in order while the budget lasts, rewriting `--out` after each."""
    from albert_keras.atomic_files import write_json

    start = time.monotonic()
    for job in jobs:
        left = args.budget_seconds - (time.monotonic() - start)
        reason = skip_reason(job, args, left)
        if reason:
            report["skipped"].append({"name": job["name"], "reason": reason})
            print(f"skip  {job['name']}: {reason}", flush=True)
            continue
        result = run_worker(job, min(args.job_timeout, left), env)
        entry = with_rates(job, result)
        report["jobs"].append(entry)
        print(progress_line(entry), flush=True)
        write_json(args.out, report)
        if not args.smoke and entry.get("platform") == "cpu":
            raise SystemExit(NO_ACCELERATOR)
    report["seconds"] = time.monotonic() - start
    return report


NO_ACCELERATOR = (
    "No accelerator: JAX sees only the CPU, where every job at the full sizes "
    "would only run into --job-timeout. Run with --smoke for the tiny CPU run, "
    "or on a machine whose JAX sees a GPU or TPU (pip install -U 'jax[cuda12]')."
)


def skip_reason(job: dict, args, left: float) -> str | None:
    if args.smoke and job["impl"] == "hf-compile":
        return "torch.compile is skipped in smoke mode (minutes on a small CPU)"
    if left <= 0:
        return f"budget of {args.budget_seconds:.0f} s spent"
    return None


def progress_line(entry: dict) -> str:
    head = f"{entry['status']:<7} {entry['name']:<40} {entry['wall_seconds']:6.1f} s"
    if entry["status"] != "ok":
        return f"{head}  {error_line(entry.get('stderr_tail') or '')}"
    if entry["impl"] == "matmul":
        return f"{head}  {matmul_line(entry)}"
    return (
        f"{head}  {entry['ms_per_step']:.2f} ms/step, "
        f"{entry['tflops']:.3g} TFLOP/s, {entry['peak_memory_bytes'] / 2**30:.2f} GiB"
    )


def error_line(stderr: str) -> str:
    """The exception line of a traceback (its last "...Error: ..." line)."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    errors = [x for x in lines if re.match(r"^[\w.]+(Error|Exception|Exit)\b", x)]
    return (errors or lines or [""])[-1][:200]


def matmul_line(entry: dict) -> str:
    n, dtype = entry["matmul_size"], entry["matmul_dtype"]
    return (
        f"large matmul {n}^3 {dtype} on {entry['device']}: "
        f"{entry['matmul_tflops']:.3g} TFLOP/s"
    )


# --- tables -------------------------------------------------------------------


def print_tables(report: dict) -> None:
    """One table per workload: rates, memory, and our speed ratio to each peer."""
    matmul = next((j for j in report["jobs"] if j["impl"] == "matmul"), None)
    peak = None
    if matmul and matmul["status"] == "ok":
        print("\n" + matmul_line(matmul))
        peak = matmul["matmul_tflops"]
    skipped = {s["name"]: s["reason"] for s in report["skipped"]}
    for workload in dict.fromkeys(j["workload"] for j in report["jobs"]):
        if workload is None:
            continue
        rows = [j for j in report["jobs"] if j["workload"] == workload]
        print_table(workload, rows, peak)
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")


def row_label(job: dict) -> str:
    parts = job["name"].split("/")[1:]
    return " ".join([LABELS.get(parts[0], parts[0]), *parts[1:]])


def print_table(workload: str, rows: list[dict], matmul_tflops) -> None:
    first = rows[0]
    kind = "inference" if first["predictions"] is None else "training"
    extra = "" if first["predictions"] is None else f", {first['predictions']} pred."
    print(
        f"\n{workload}: {kind}, H={first['sizes']['hidden_size']} "
        f"L={first['sizes']['num_hidden_layers']}, {first['batch']} x "
        f"{first['length']}{extra}, {first['flops_per_step'] / 1e12:.4g} TFLOP/step"
    )
    ours = [r for r in rows if r["impl"].startswith("ours") and r["status"] == "ok"]
    header = f"{'implementation':<24}{'ms/step':>10}{'seq/s':>10}{'tokens/s':>11}"
    header += f"{'TFLOP/s':>9}{'of mm':>7}{'GiB':>7}"
    header += "".join(f"{row_label(o) + ' / X':>{len(row_label(o)) + 6}}" for o in ours)
    print(header)
    for row in rows:
        print(table_row(row, ours, matmul_tflops))


def table_row(row: dict, ours: list[dict], matmul_tflops) -> str:
    label = row_label(row)
    if row["status"] != "ok":
        return f"{label:<24}{row['status']:>10}"
    share = f"{row['tflops'] / matmul_tflops:.0%}" if matmul_tflops else "-"
    line = (
        f"{label:<24}{row['ms_per_step']:>10.2f}{row['seq_per_s']:>10.1f}"
        f"{row['tokens_per_s']:>11.0f}{row['tflops']:>9.3g}{share:>7}"
        f"{row['peak_memory_bytes'] / 2**30:>7.2f}"
    )
    for o in ours:
        ratio = f"{row['ms_per_step'] / o['ms_per_step']:.2f}x"
        line += f"{ratio:>{len(row_label(o)) + 6}}"
    return line


def print_plan(jobs: list[dict], args) -> None:
    """--dry-run: the jobs in order and the FLOPs per step of each workload."""
    print(f"{'mode: smoke (CPU sizes)' if args.smoke else 'mode: full'}")
    print(f"budget {args.budget_seconds:.0f} s, job timeout {args.job_timeout:.0f} s")
    for i, job in enumerate(jobs):
        note = skip_reason(job, args, 1.0) or ""
        print(f"{i:3d} {job['name']:<44}{note}")
    shown = dict.fromkeys(j["workload"] for j in jobs if j["workload"])
    print("\nFLOPs per step (model_flops):")
    for workload in shown:
        s = workload_shape(workload, args.smoke)
        sizes = " ".join(f"{SHORT[k]}={v}" for k, v in s["sizes"].items())
        task = f"P={s['predictions']}" if s["predictions"] else "inference"
        print(
            f"  {workload:<18}{s['batch']:>4} x {s['length']:<4}{task:<10}{sizes}: "
            f"{s['flops_per_step']:.4g} FLOP"
        )


# --- workers ------------------------------------------------------------------


def worker_main(job: dict) -> None:
    """Runs one job in this process and prints its result as one JSON line."""
    watchdog = threading.Thread(target=_exit_with_parent, args=(os.getppid(),))
    watchdog.daemon = True
    watchdog.start()
    if job["no_tensorflow"]:
        sys.modules["tensorflow"] = None  # as on a GPU machine without it
    if job["inject_failure"]:
        raise RuntimeError(f"injected failure (--inject-failure) in {job['name']}")
    while job.get("inject_hang"):  # until --job-timeout kills it
        time.sleep(1)
    apply_variant(job.get("variant"))
    start = time.perf_counter()
    result = runner_of(job["impl"])(job)
    result["seconds"] = time.perf_counter() - start
    tf = sys.modules.get("tensorflow")
    result["tensorflow_imported"] = tf is not None
    print(RESULT_MARK + json.dumps(result), flush=True)


def apply_variant(variant: str | None) -> None:
    """Sets up one of `VARIANTS` in this worker, before JAX is imported."""
    if variant == "cublaslt":
        flags = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_cublaslt=true"
        os.environ["XLA_FLAGS"] = flags.strip()
    elif variant == "qkv3":
        from albert_keras.layers import albert_attention

        albert_attention.FORCE_QKV_PROJECTION = "three"
    elif variant == "seqlen":
        from albert_keras.layers.albert_attention import AlbertAttention

        AlbertAttention._fused_attention = _key_length_attention
    elif variant is not None:
        raise ValueError(f"Unknown variant {variant!r}; known: {sorted(VARIANTS)}")


def _key_length_attention(self, q, k, v, padding_mask):
    """`AlbertAttention._fused_attention` with key lengths, not a mask bias.

    Exact only where each row's real tokens come first (as the tokenizers
    write them); cuDNN then needs no [batch, 1, queries, keys] bias, nor
    computes its gradient.
    """
    import jax
    import jax.numpy as jnp

    queries = q.shape[1]
    if queries % 2:
        q = jnp.pad(q, ((0, 0), (0, 1), (0, 0), (0, 0)))
    lengths = None
    if padding_mask is not None:
        lengths = jnp.sum(jnp.asarray(padding_mask, "int32"), axis=1)
    gpu = jax.default_backend() == "gpu"
    context = jax.nn.dot_product_attention(
        q,
        k,
        v,
        scale=1.0 / self.head_size**0.5,
        key_value_seq_lengths=lengths,
        implementation="cudnn" if gpu else None,
    )
    return context[:, :queries]


def _exit_with_parent(parent: int) -> None:
    """Ends this worker when the parent dies (a killed run frees the GPU)."""
    while os.getppid() == parent:
        time.sleep(2)
    os._exit(1)


def runner_of(impl: str):
    """The function that runs an implementation's job."""
    if impl == "matmul":
        return run_matmul
    if impl == "keras-hub" or impl.startswith("ours"):
        return run_keras
    if impl.startswith("hf-"):
        return run_torch
    raise ValueError(f"Unknown implementation. Received: {impl!r}")


def synthetic(job: dict, count: int, seed: int = 0) -> tuple[dict, dict]:
    """`count` distinct batches of a job's shape: `pretraining_batches`."""
    rows, predictions = job["batch"] * count, job["predictions"] or 1
    vocab = job["sizes"]["vocab_size"]
    return pretraining_batches(rows, job["length"], predictions, vocab, seed)


def pretraining_batches(
    n: int, length: int, predictions: int, vocab: int, seed: int = 0
) -> tuple[dict, dict]:
    """`n` sequences of random inputs and pretraining targets (NumPy).

    Returns `(x, y)`: `AlbertPretrainer`'s inputs (`token_ids`, `segment_ids`,
    `padding_mask`, `mask_positions`) and its targets (`mask_ids`,
    `mask_weights`, `sop_labels`). The benchmarks of the pretraining step
    (`bench_pretraining_step.py`, `profile_pretraining_step.py`) train on them.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = {
        "token_ids": rng.integers(5, vocab, (n, length)).astype("int32"),
        "segment_ids": (np.arange(length)[None] >= length // 2)
        .repeat(n, 0)
        .astype("int32"),
        "padding_mask": np.ones((n, length), "int32"),
        "mask_positions": np.sort(
            rng.random((n, length)).argsort(-1)[:, :predictions], -1
        ).astype("int32"),
    }
    y = {
        "mask_ids": rng.integers(5, vocab, (n, predictions)).astype("int32"),
        "mask_weights": np.ones((n, predictions), "float32"),
        "sop_labels": rng.integers(0, 2, (n,)).astype("int32"),
    }
    return x, y


def tiled(arrays: dict, rows: int) -> dict:
    """The arrays' rows repeated to `rows` rows (a fixed set of batches, cycled)."""
    import numpy as np

    return {k: np.resize(v, (rows, *v.shape[1:])) for k, v in arrays.items()}


def peak_memory(backend: str) -> tuple[int, str]:
    """Peak bytes of the accelerator, else this process's peak resident memory."""
    if backend == "jax":
        import jax

        stats = jax.devices()[0].memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            return int(stats["peak_bytes_in_use"]), "jax peak_bytes_in_use"
    if backend == "torch":
        import torch

        if torch.cuda.is_available():
            return torch.cuda.max_memory_allocated(), "torch.cuda.max_memory_allocated"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "ru_maxrss"


def run_matmul(job: dict) -> dict:
    """TFLOP/s of a large matmul: 8192^3 bfloat16 on an accelerator, 1024^3 f32 else."""
    import jax
    import jax.numpy as jnp

    on_accelerator = jax.default_backend() != "cpu"
    n, dtype = (8192, jnp.bfloat16) if on_accelerator else (1024, jnp.float32)
    a = jax.random.normal(jax.random.key(0), (n, n), dtype)
    b = jax.random.normal(jax.random.key(1), (n, n), dtype)
    product = jax.jit(jnp.matmul)
    product(a, b).block_until_ready()
    calls, rounds = (20, 5) if on_accelerator else (3, 3)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            out = product(a, b)
        out.block_until_ready()
        times.append((time.perf_counter() - start) / calls)
    return dict(
        device=jax.devices()[0].device_kind,
        platform=jax.default_backend(),
        matmul_size=n,
        matmul_dtype=jnp.dtype(dtype).name,
        matmul_tflops=2 * n**3 / statistics.median(times) / 1e12,
    )


# --- Keras workers (ours and keras-hub) ---------------------------------------


def set_attention_path(path: str | None) -> dict:
    """Sets `FORCE_ATTENTION_PATH` of our attention layer; says which path runs."""
    from albert_keras.layers import albert_attention

    present = hasattr(albert_attention, "FORCE_ATTENTION_PATH")
    forced = None if path in (None, "auto") else path
    setattr(albert_attention, "FORCE_ATTENTION_PATH", forced)  # noqa: B010
    used = forced
    if not present:
        used = "explicit (this version has no fused path)"
    elif forced is None:
        from albert_keras.layers import accelerator

        used = "fused" if accelerator.fused_attention_is_faster() else "explicit"
    return dict(requested=path or "auto", attribute_present=present, path=used)


def remat_scope(config):
    """The product's gradient checkpointing (`albert-keras pretrain
    --gradient-checkpointing`): a `keras.RematScope` over the encoder's blocks.

    Where the package has none, `keras.RematScope(mode="full")`, which
    remats every layer; under JAX that hands `training` to the layers as a
    traced value, which our embedding's dropout cannot branch on.
    """
    import keras

    try:
        from albert_keras.models.gradient_checkpointing import gradient_checkpointing
    except ImportError:
        return keras.RematScope(mode="full")
    return gradient_checkpointing(config)


def build_ours(job: dict):
    """Our pretrainer (compiled as `albert-keras pretrain` does) or backbone."""
    from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    from albert_keras.training.optimizers import create_optimizer

    config = AlbertConfig.from_preset(
        job["preset"],
        **job["sizes"],
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=max(512, job["length"]),
    )
    scope = remat_scope(config) if job["remat"] else None
    if scope is not None:
        job["remat_mode"] = scope.mode  # reported with the result
    with scope or contextlib.nullcontext():
        backbone = AlbertBackbone(config, dtype=POLICY)
        if job["predictions"] is None:
            return backbone
        model = AlbertPretrainer(backbone)
    name, rate = ("lamb", 1.76e-3) if job["impl"] == "ours-lamb" else ("adamw", 1e-4)
    model.compile(
        optimizer=create_optimizer(name, rate, 100_000, 1000),
        jit_compile=True,
        steps_per_execution=job["steps_per_execution"],
    )
    return model


def build_keras_hub(job: dict):
    """keras-hub's AlbertMaskedLM (MLM only, `keras.optimizers.Lamb`) or backbone."""
    import keras
    import keras_hub

    s = job["sizes"]
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=s["vocab_size"],
        num_layers=s["num_hidden_layers"],
        num_heads=s["num_attention_heads"],
        embedding_dim=s["embedding_size"],
        hidden_dim=s["hidden_size"],
        intermediate_dim=s["intermediate_size"],
        dropout=0.0,
        max_sequence_length=max(512, job["length"]),
        dtype=POLICY,
    )
    if job["predictions"] is None:
        return backbone
    model = keras_hub.models.AlbertMaskedLM(backbone, preprocessor=None)
    model.compile(
        optimizer=keras.optimizers.Lamb(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=[],
        jit_compile=True,
        steps_per_execution=job["steps_per_execution"],
    )
    return model


def run_keras(job: dict) -> dict:
    """Builds the Keras model of the job and times `fit` or the forward pass."""
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras

    keras.config.set_dtype_policy(POLICY)
    keras.utils.set_random_seed(0)
    result = dict(backend=keras.backend.backend())
    if job["impl"].startswith("ours"):
        result["attention"] = set_attention_path(job["attention"])
        model = build_ours(job)
        result["remat_mode"] = job.get("remat_mode")
    else:
        model = build_keras_hub(job)
    if job["predictions"] is None:
        result.update(time_keras_forward(model, job))
    else:
        result.update(time_fit(model, job))
    memory, source = peak_memory(result["backend"])
    result.update(
        peak_memory_bytes=memory,
        peak_memory_source=source,
        device=keras_device(result["backend"]),
        library_versions=imported_versions(),
    )
    return result


def time_fit(model, job: dict) -> dict:
    """Median ms per step of `fit` calls of `steps` steps, after one to compile."""
    import keras

    x, y = synthetic(job, min(job["steps"], 4))
    batch, steps = job["batch"], job["steps"]
    x, y = tiled(x, batch * steps), tiled(y, batch * steps)
    weights, fit_method = None, type(model).fit
    if job["impl"] == "keras-hub":  # targets and sample weights, MLM only
        y, weights = y["mask_ids"], y["mask_weights"]
        # keras-hub's `fit` turns arrays into a grain or tf.data pipeline
        # (for its preprocessor, None here) and fails with neither installed;
        # Keras's own `fit` feeds the arrays as it does ours.
        fit_method = keras.Model.fit

    def fit(rows):
        fit_method(
            model,
            _first(x, rows),
            _first(y, rows),
            sample_weight=_first(weights, rows),
            batch_size=batch,
            epochs=1,
            shuffle=False,
            verbose=0,
        )

    start = time.perf_counter()
    fit(batch * job["steps_per_execution"])  # compiles
    compile_seconds = time.perf_counter() - start
    seconds = []
    for _ in range(job["repeats"]):
        start = time.perf_counter()
        fit(batch * steps)
        seconds.append(time.perf_counter() - start)
    return dict(
        ms_per_step=1000 * statistics.median(seconds) / steps,
        call_seconds=seconds,
        steps_per_call=steps,
        compile_seconds=compile_seconds,
    )


def _first(data, rows):
    """The first `rows` rows of an array or a dict of arrays (None stays None)."""
    if isinstance(data, dict):
        return {k: v[:rows] for k, v in data.items()}
    return None if data is None else data[:rows]


def keras_forward(model, inputs: dict):
    """A call of the backbone forward pass and a function that waits for it.

    On JAX: `stateless_call` under `jax.jit` on inputs already on the device
    (what `predict` compiles, without copying the output back to the host).
    Elsewhere: `predict_on_batch`.
    """
    import keras

    if keras.backend.backend() != "jax":
        return lambda: model.predict_on_batch(inputs), lambda out: out
    import jax

    state = (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
    )

    @jax.jit
    def forward(state, x):
        outputs, _ = model.stateless_call(*state, x, training=False)
        return outputs["sequence_output"]

    x = jax.device_put(inputs)
    return lambda: forward(state, x), jax.block_until_ready


def time_keras_forward(model, job: dict) -> dict:
    x, _ = synthetic(job, 1)
    inputs = {k: x[k] for k in ("token_ids", "segment_ids", "padding_mask")}
    call, wait = keras_forward(model, inputs)
    return time_steps(lambda i: call(), wait, job, warmup=2)


def time_steps(step, wait, job: dict, warmup: int) -> dict:
    """Median ms per step over `repeats` rounds of `steps` steps.

    `step(i)` runs step `i` and returns its output, `wait(out)` blocks until
    the device is done with it; `warmup` steps first, to compile.
    """
    start = time.perf_counter()
    for i in range(warmup):
        out = step(i)
    wait(out)
    compile_seconds = time.perf_counter() - start
    seconds = []
    for _ in range(job["repeats"]):
        start = time.perf_counter()
        for i in range(job["steps"]):
            out = step(i)
        wait(out)
        seconds.append(time.perf_counter() - start)
    return dict(
        ms_per_step=1000 * statistics.median(seconds) / job["steps"],
        call_seconds=seconds,
        steps_per_call=job["steps"],
        compile_seconds=compile_seconds,
    )


def keras_device(backend: str) -> str:
    if backend == "jax":
        import jax

        return jax.devices()[0].device_kind
    return f"{backend} ({platform.processor() or platform.machine()})"


def imported_versions() -> dict:
    """Versions of the compared libraries this worker imported."""
    modules = {"keras": "keras", "keras_hub": "keras-hub", "jax": "jax"}
    modules.update(torch="torch", transformers="transformers")
    return {
        name: getattr(sys.modules[module], "__version__", None)
        for module, name in modules.items()
        if sys.modules.get(module) is not None
    }


# --- PyTorch workers (HF transformers) ----------------------------------------


def hf_model(job: dict, device: str):
    """HF AlbertForPreTraining (training) or AlbertModel (inference), dropout 0."""
    import transformers

    from albert_keras.config import AlbertConfig
    from checkpoints_convert.hf_names import hf_config_dict

    config = AlbertConfig.from_preset(
        job["preset"], **job["sizes"], max_position_embeddings=max(512, job["length"])
    )
    training = job["predictions"] is not None
    architecture = "AlbertForPreTraining" if training else "AlbertModel"
    values = hf_config_dict(config, architecture)
    values.update(
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
    )
    model_class = getattr(transformers, architecture)
    return model_class(transformers.AlbertConfig(**values)).to(device)


def torch_batches(job: dict, device: str, count: int) -> list[dict]:
    """The synthetic batches as HF keyword arguments, on the device."""
    import numpy as np
    import torch

    x, y = synthetic(job, count)
    batches = []
    for i in range(count):
        rows = slice(i * job["batch"], (i + 1) * job["batch"])
        ids = x["token_ids"][rows]
        batch = dict(
            input_ids=ids,
            token_type_ids=x["segment_ids"][rows],
            attention_mask=x["padding_mask"][rows],
        )
        if job["predictions"] is not None:
            labels = np.full_like(ids, -100)
            np.put_along_axis(
                labels, x["mask_positions"][rows], y["mask_ids"][rows], axis=1
            )
            batch.update(labels=labels, sentence_order_label=y["sop_labels"][rows])
        batches.append(
            {k: torch.as_tensor(v, device=device).long() for k, v in batch.items()}
        )
    return batches


def run_torch(job: dict) -> dict:
    """HF transformers, eager or `torch.compile`d: training steps or forward calls."""
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if job["smoke"]:
        # On a small shared CPU, idle-spinning OpenMP threads made tiny
        # steps 30 to 100 times slower.
        torch.set_num_threads(1)
    torch.manual_seed(0)
    model = hf_model(job, device)
    training = job["predictions"] is not None
    runnable = torch.compile(model) if job["impl"] == "hf-compile" else model
    batches = torch_batches(job, device, min(job["steps"], 4))

    def wait(out):
        if device == "cuda":
            torch.cuda.synchronize()

    if training:
        model.train()
        result = time_torch_training(runnable, model, batches, job, device, wait)
    else:
        model.eval()
        with torch.inference_mode():
            result = time_torch_forward(runnable, batches, job, device, wait)
    memory, source = peak_memory("torch")
    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    result.update(
        backend="torch",
        device=name,
        attention={"path": model.config._attn_implementation},
        peak_memory_bytes=memory,
        peak_memory_source=source,
        library_versions={"torch": torch.__version__}
        | {"transformers": transformers.__version__},
    )
    return result


def time_torch_training(runnable, model, batches, job, device, wait) -> dict:
    import torch

    fused = device == "cuda"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused)

    def step(i):
        with torch.autocast(device, torch.bfloat16):
            loss = runnable(**batches[i % len(batches)]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    return time_steps(step, wait, job, warmup=3)


def time_torch_forward(runnable, batches, job, device, wait) -> dict:
    import torch

    def step(i):
        with torch.autocast(device, torch.bfloat16):
            return runnable(**batches[i % len(batches)]).last_hidden_state

    return time_steps(step, wait, job, warmup=3)


# --- command line -------------------------------------------------------------


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench_accelerator.json", help="results JSON")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, on the CPU")
    p.add_argument("--dry-run", action="store_true", help="print the plan only")
    p.add_argument("--jobs", help="comma-separated job names or substrings")
    p.add_argument("--remat", action="store_true", help="add the xxlarge remat jobs")
    p.add_argument(
        "--attention",
        choices=["auto", "explicit", "fused", "both"],
        default="auto",
        help="our attention path (both: our jobs once per path)",
    )
    p.add_argument(
        "--variants",
        type=lambda text: [v for v in text.split(",") if v],
        default=[],
        help=f"comma-separated changes to also time ours with: {', '.join(VARIANTS)}",
    )
    p.add_argument("--budget-seconds", type=float, default=540.0)
    p.add_argument("--job-timeout", type=float, default=150.0, help="seconds")
    p.add_argument("--steps-per-execution", type=int, help="default 10 (smoke 2)")
    p.add_argument("--executions-per-call", type=int, default=1)
    p.add_argument("--repeats", type=int, help="timed calls, default 3 (smoke 2)")
    p.add_argument(
        "--no-tensorflow",
        action="store_true",
        help="workers act as if TensorFlow were not installed",
    )
    p.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not share JAX's compilation cache between the workers",
    )
    p.add_argument("--inject-failure", help=argparse.SUPPRESS)
    p.add_argument("--inject-hang", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.steps_per_execution is None:
        args.steps_per_execution = 2 if args.smoke else 10
    if args.repeats is None:
        args.repeats = 2 if args.smoke else 3
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        p.error(f"unknown --variants {unknown}; known: {', '.join(VARIANTS)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        worker_main(json.loads(args.worker))
        return 0
    jobs = selected(plan_jobs(args), args.jobs)
    if args.jobs and len(jobs) == 1:
        names = ", ".join(job["name"] for job in plan_jobs(args)[1:])
        raise SystemExit(f"--jobs {args.jobs!r} matches no job; the jobs: {names}")
    if args.dry_run:
        print_plan(jobs, args)
        return 0
    report = run_all(jobs, args)
    print_tables(report)
    print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
