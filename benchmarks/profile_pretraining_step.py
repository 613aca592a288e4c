"""Where a pretraining step's time goes, on JAX: a `jax.profiler` trace, summed.

Builds `AlbertPretrainer` (MLM + SOP, `FastLamb`, `fit` as `albert-keras
pretrain` trains), compiles, traces `--steps` steps with `jax.profiler`
(a Perfetto trace, kept in `--trace-dir`), and prints the device time of the
traced steps by kind of operation (matmuls, attention, loss and softmax over
the vocabulary, the optimizer update, other fusions) and the top operations.
On a GPU the device streams are summed; on the CPU the XLA operations of the
host threads.

    KERAS_BACKEND=jax python benchmarks/profile_pretraining_step.py \\
        --preset albert_base_v2 --batch 256 --length 128 --predictions 20 \\
        --dtype mixed_bfloat16
    KERAS_BACKEND=jax python benchmarks/profile_pretraining_step.py --smoke
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import bench_accelerator  # noqa: E402
import keras  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer  # noqa: E402
from albert_keras.training.optimizers import create_optimizer  # noqa: E402

KINDS = [
    ("attention (fused kernel)", r"flash|fmha|cudnn|attention"),
    (
        "matmul",
        r"gemm|cublas|matmul|ynn_fusion|\bdot|dot[._]|convolution|cutlass|nvjet|sm90",
    ),
    ("optimizer", r"lamb|adam|optimizer|apply_grad|update"),
    ("reduce / softmax / loss", r"reduce|softmax|log|exp|argmax|gather|scatter"),
    ("copy / transpose", r"copy|transpose|memcpy|memset|broadcast"),
]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="albert_base_v2")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--dtype", default="mixed_bfloat16")
    parser.add_argument("--trace-dir", default="profile_trace")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", help="the summary as JSON")
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny model on the CPU (seconds)"
    )
    return parser.parse_args(argv)


def make_model(args):
    sizes = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if args.smoke:
        config = AlbertConfig(
            vocab_size=1000, embedding_size=16, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=128, **sizes,
        )  # fmt: skip
    else:
        config = AlbertConfig.from_preset(args.preset, **sizes)
    model = AlbertPretrainer(AlbertBackbone(config, dtype=args.dtype))
    model.compile(
        optimizer=create_optimizer("lamb", 1e-4, 1000, 10),
        jit_compile=True,
        steps_per_execution=args.steps,
    )
    return model, config


def kind_of(name):
    for kind, pattern in KINDS:
        if re.search(pattern, name, re.IGNORECASE):
            return kind
    return "other fusions"


def device_events(trace):
    """Complete events of the device streams (GPU), else of XLA's CPU ops."""
    names = {}
    for event in trace.get("traceEvents", []):
        if event.get("ph") == "M" and event.get("name") == "process_name":
            names[event["pid"]] = event.get("args", {}).get("name", "")
    gpu = {pid for pid, name in names.items() if "/device:GPU" in name}
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    if gpu:
        return [e for e in events if e["pid"] in gpu], "GPU streams"
    # CPU: XLA's operations carry the HLO op in args or names like fusion.12.
    ops = [
        e for e in events
        if "hlo_op" in e.get("args", {})
        or re.match(r"^(%?[a-z_\-]+(\.\d+)+|fusion|dot|copy)", e["name"])
    ]  # fmt: skip
    return ops, "XLA CPU operations"


def summarize(trace_dir, steps, top):
    pattern = os.path.join(trace_dir, "**", "*.trace.json.gz")
    files = sorted(glob.glob(pattern, recursive=True))
    if not files:
        raise SystemExit(f"no Perfetto trace under {trace_dir}")
    with gzip.open(files[-1], "rt") as handle:
        trace = json.load(handle)
    events, source = device_events(trace)
    by_name = collections.Counter()
    for event in events:
        by_name[event["name"]] += event["dur"]
    total = sum(by_name.values()) or 1
    by_kind = collections.Counter()
    for name, duration in by_name.items():
        by_kind[kind_of(name)] += duration
    return {
        "source": source,
        "trace": files[-1],
        "ms_per_step": total / 1000 / steps,
        "kinds": {k: v / total for k, v in by_kind.most_common()},
        "top": [(n, d / 1000 / steps, d / total) for n, d in by_name.most_common(top)],
    }


def print_summary(summary):
    ms = summary["ms_per_step"]
    print(f"device time per step ({summary['source']}): {ms:.2f} ms")
    for kind, share in summary["kinds"].items():
        print(f"  {kind:28s} {100 * share:5.1f} %")
    print("top operations (ms per step, share):")
    for name, ms, share in summary["top"]:
        print(f"  {ms:8.3f} {100 * share:5.1f} %  {name[:100]}")


def main(argv=None):
    args = parse_args(argv)
    if keras.backend.backend() != "jax":
        raise SystemExit("set KERAS_BACKEND=jax: this profiles with jax.profiler")
    import jax

    if args.smoke:
        args.batch, args.length, args.predictions, args.steps = 4, 32, 5, 2
        args.dtype = "float32"
    model, config = make_model(args)
    x, y = bench_accelerator.pretraining_batches(
        args.batch * args.steps, args.length, args.predictions, config.vocab_size
    )
    model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0)  # compile
    with jax.profiler.trace(args.trace_dir, create_perfetto_trace=True):
        model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0)
    summary = summarize(args.trace_dir, args.steps, args.top)
    summary.update(device=str(jax.devices()[0]), preset=args.preset, batch=args.batch,
                   length=args.length, dtype=args.dtype)  # fmt: skip
    print_summary(summary)
    if args.out:
        from albert_keras.atomic_files import write_json

        write_json(args.out, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
