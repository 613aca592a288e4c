"""Model build time: albert-keras vs keras-hub AlbertBackbone, each in a fresh Python.

What a user waits for before the first step of every new process: creating
and initializing the weights of a backbone. Each (backend, config,
implementation) is built in its own fresh Python, so nothing is cached from
an earlier build, and timed in CPU-seconds of the process
(`time.process_time`, steady on a shared machine) and wall-clock seconds,
the imports excluded. Under JAX a weight initializer that compiles its
sampler pays an XLA compilation for every new weight shape.

`--first-step` times, after the build, a classifier head and the first
`fit` step on one batch of 8 x 64 (AdamW, the same `compile` for both): the
tracing and compilation every new fine-tuning process waits for.

    python benchmarks/bench_model_build.py [--backends jax,tensorflow,torch]
        [--configs tiny,base] [--first-step] [--output build.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys

CONFIGS = {
    "tiny": "albert_tiny",
    "base": "albert_base_v2",
}
IMPLEMENTATIONS = ("ours", "keras_hub")
BACKENDS = ("jax", "tensorflow", "torch")


def build(job: dict) -> dict:
    """Builds one backbone in this (fresh) Python; its times in seconds."""
    import time

    import keras

    from albert_keras import AlbertBackbone, AlbertConfig

    config = AlbertConfig.from_preset(CONFIGS[job["config"]])
    if job["impl"] == "keras_hub":
        import keras_hub

        from checkpoints_convert.keras_hub_names import keras_hub_config

        def make():  # the converter's mapping of our config to keras-hub's
            return keras_hub.models.AlbertBackbone(**keras_hub_config(config))
    else:

        def make():
            return AlbertBackbone(config)

    cpu, wall = time.process_time(), time.perf_counter()
    model = make()
    result = {
        "backend": keras.backend.backend(),
        "parameters": model.count_params(),
        "cpu_seconds": time.process_time() - cpu,
        "wall_seconds": time.perf_counter() - wall,
    }
    if job.get("first_step"):
        cpu = time.process_time()
        first_fit_step(model, job["impl"])
        result["step_cpu_seconds"] = time.process_time() - cpu
    return result


def first_fit_step(backbone, impl: str) -> None:
    """A 2-class head on `backbone`, compiled, and one `fit` step of 8 x 64."""
    import keras
    import numpy as np

    if impl == "keras_hub":
        import keras_hub

        model = keras_hub.models.AlbertTextClassifier(
            backbone, num_classes=2, preprocessor=None
        )
    else:
        from albert_keras import AlbertClassifier

        model = AlbertClassifier(backbone, num_classes=2)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(5, 900, (8, 64)).astype("int32"),
        "segment_ids": np.zeros((8, 64), "int32"),
        "padding_mask": np.ones((8, 64), "int32"),
    }
    model.fit(x, np.arange(8) % 2, batch_size=8, epochs=1, verbose=0)


def run_job(job: dict) -> dict:
    env = dict(os.environ, KERAS_BACKEND=job["backend"], TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, __file__, "--job", json.dumps(job)],
        capture_output=True,
        text=True,
        env=env,
    )
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1:]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _names(parser, text, known, flag):
    names = text.split(",")
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"unknown {flag} {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument(
        "--first-step",
        action="store_true",
        help="also time a classifier head and its first fit step",
    )
    parser.add_argument("--output", help="write the results as JSON here")
    parser.add_argument("--job", help=argparse.SUPPRESS)  # one build, in a child
    args = parser.parse_args(argv)
    if args.job:
        print(json.dumps(build(json.loads(args.job))))
        return
    backends = _names(parser, args.backends, BACKENDS, "--backends")
    configs = _names(parser, args.configs, CONFIGS, "--configs")
    if "torch" in backends and importlib.util.find_spec("torch") is None:
        parser.error("--backends torch: PyTorch is not installed (pip install torch)")
    rows = []
    print("backend     config  ours CPU-s  keras-hub CPU-s  ratio (hub / ours)")
    for backend in backends:
        for config in configs:
            times = {
                impl: run_job(
                    {
                        "backend": backend,
                        "config": config,
                        "impl": impl,
                        "first_step": args.first_step,
                    }
                )
                for impl in IMPLEMENTATIONS
            }
            rows.append({"backend": backend, "config": config, **times})
            ours, hub = times["ours"], times["keras_hub"]
            if "error" in ours or "error" in hub:
                print(f"{backend:<11} {config:<7} failed: {ours} {hub}")
                continue
            _print_row(backend, config, ours, hub, args.first_step)
    if args.output:
        from albert_keras.atomic_files import write_json

        write_json(args.output, {"rows": rows})


def _print_row(backend, config, ours, hub, first_step):
    ratio = hub["cpu_seconds"] / ours["cpu_seconds"]
    line = (
        f"{backend:<11} {config:<7} {ours['cpu_seconds']:10.2f}  "
        f"{hub['cpu_seconds']:15.2f}  {ratio:.1f}x"
    )
    if first_step:
        mine, theirs = ours["step_cpu_seconds"], hub["step_cpu_seconds"]
        line += f"   first step {mine:.2f} vs {theirs:.2f} ({theirs / mine:.1f}x)"
    print(line, flush=True)


if __name__ == "__main__":
    main()
