"""Backbone inference: albert-keras vs keras-hub AlbertBackbone, same process, same run.

Batch 8 x 128 by default, ALBERT-base and the small config. Modes:

- fp32: both models under `jit_compile=True` (XLA);
- bf16: ours with `dtype="mixed_bfloat16"` (best path on CPU: oneDNN bf16
  matmuls, no XLA, whose CPU backend has no fast bf16 dot), against keras-hub
  fp32 (XLA); keras-hub bf16 is measured too, for information.

It also measures the machine's matmul roofline (fp32 and bf16 GFLOP/s of a
[1024, 768] x [768, 3072] product), so the ratios can be read against what
the hardware allows: ALBERT-base is 179 GFLOP per 8 x 128 batch.

    python benchmarks/bench_backbone_inference.py [--configs base,small]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402

CONFIGS = {
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12),
    "small": dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4),
}


def flops(config, batch, length):
    """Multiply-adds x 2 of the encoder (projections, FFN, attention)."""
    h, i, t = config["hidden_size"], 4 * config["hidden_size"], batch * length
    per_layer = 2 * t * (4 * h * h + 2 * h * i) + 4 * batch * length * length * h
    return per_layer * config["num_hidden_layers"]


def matmul_roofline():
    a = tf.random.normal([1024, 768])
    b = tf.random.normal([768, 3072])
    result = {}
    for name, dtype, jit in (
        ("fp32_xla", tf.float32, True),
        ("bf16_onednn", tf.bfloat16, False),
    ):
        f = tf.function(
            lambda a, b, dtype=dtype: tf.matmul(tf.cast(a, dtype), tf.cast(b, dtype)),
            jit_compile=jit,
        )
        f(a, b)
        start = time.perf_counter()
        for _ in range(30):
            out = f(a, b)
        out.numpy()
        result[name] = (
            2 * 1024 * 768 * 3072 / ((time.perf_counter() - start) / 30) / 1e9
        )
    return result


def make_call(model, jit):
    call = tf.function(
        lambda x: model(x, training=False)["sequence_output"], jit_compile=jit
    )
    return call


def measure(calls, inputs, seconds):
    """Median seconds per batch of each call, measured in alternating rounds."""
    for call in calls.values():
        call(inputs).numpy()  # compile
        call(inputs).numpy()
    times = {name: [] for name in calls}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or min(len(t) for t in times.values()) < 3:
        for name, call in calls.items():
            start = time.perf_counter()
            call(inputs).numpy()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="base,small")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=30.0, help="per config")
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args(argv)
    names = args.configs.split(",")
    unknown = [name for name in names if name not in CONFIGS]
    if unknown:
        parser.error(
            f"unknown --configs {', '.join(unknown)}; known: {', '.join(CONFIGS)}"
        )
    import keras_hub

    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": tf.constant(
            rng.integers(5, 30000, (args.batch, args.length)), "int32"
        ),
        "segment_ids": tf.zeros((args.batch, args.length), "int32"),
        "padding_mask": tf.ones((args.batch, args.length), "int32"),
    }
    roofline = matmul_roofline()
    print(
        f"matmul roofline: fp32 (XLA) {roofline['fp32_xla']:.0f} GFLOP/s, "
        f"bf16 (oneDNN) {roofline['bf16_onednn']:.0f} GFLOP/s"
    )
    results = {"roofline_gflops": roofline, "configs": {}}
    for name in names:
        print(f"\ntiming {name} ({args.seconds:.0f} s after compiling)...", flush=True)
        sizes = dict(
            vocab_size=30000,
            embedding_size=128,
            intermediate_size=4 * CONFIGS[name]["hidden_size"],
            **CONFIGS[name],
        )
        config = AlbertConfig(**sizes)

        def hub_model(dtype=None, sizes=sizes):
            return keras_hub.models.AlbertBackbone(
                vocabulary_size=sizes["vocab_size"],
                num_layers=sizes["num_hidden_layers"],
                num_heads=sizes["num_attention_heads"],
                embedding_dim=sizes["embedding_size"],
                hidden_dim=sizes["hidden_size"],
                intermediate_dim=sizes["intermediate_size"],
                dtype=dtype,
            )

        calls = {
            "ours_fp32_xla": make_call(AlbertBackbone(config), True),
            "keras_hub_fp32_xla": make_call(hub_model(), True),
            "ours_bf16": make_call(
                AlbertBackbone(config, dtype="mixed_bfloat16"), False
            ),
            "keras_hub_bf16": make_call(hub_model("mixed_bfloat16"), False),
        }
        seconds = measure(calls, inputs, args.seconds)
        rates = {k: args.batch / v for k, v in seconds.items()}
        gflop = flops(sizes, args.batch, args.length) / 1e9
        hub = rates["keras_hub_fp32_xla"]
        entry = {
            "seq_per_s": rates,
            "gflop_per_batch": gflop,
            "ratio_fp32": rates["ours_fp32_xla"] / hub,
            "ratio_ours_bf16_vs_keras_hub_fp32": rates["ours_bf16"] / hub,
        }
        results["configs"][name] = entry
        print(f"{name}: {gflop:.3g} GFLOP per {args.batch} x {args.length} batch")
        for key, rate in rates.items():
            achieved = rate / args.batch * gflop
            print(f"  {key:<22}{rate:>8.1f} seq/s  ({achieved:.0f} GFLOP/s)")
        ratio = entry["ratio_fp32"]
        print(f"  ratio fp32 ours / keras-hub:          {ratio:.2f}x (target 1.1x)")
        print(
            "  ratio ours bf16 / keras-hub fp32:     "
            f"{entry['ratio_ours_bf16_vs_keras_hub_fp32']:.2f}x (target 1.7x)"
        )
    if args.output:
        write_json(args.output, results)
        print(f"results: {args.output}")


if __name__ == "__main__":
    main()
