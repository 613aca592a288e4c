"""Pretraining steps/s: our AlbertPretrainer (MLM + SOP) vs keras-hub AlbertMaskedLM.

Both `fit` the same synthetic batches (batch 8 x 128, 20 masked positions,
vocabulary 30000) on the small config (H=256, L=4, E=128, I=1024, 4 heads),
with LAMB and `jit_compile=True`, in the same process, and the script prints
sequences/s of each and the ratio. keras-hub has no SOP head, so ours does
strictly more work per step. Ours runs with the LAMB that `albert-keras
pretrain` uses (`FastLamb`) and, as a third line, with `keras.optimizers.Lamb`
as keras-hub does, so the share of each change shows.

    python benchmarks/bench_pretraining_step.py [--steps 30] [--repeats 3]
    python benchmarks/bench_pretraining_step.py --dropout 0.1   # v1 configs
    python benchmarks/bench_pretraining_step.py --dtype mixed_bfloat16
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import bench_accelerator  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.training.fast_lamb import FastLamb  # noqa: E402

SMALL = dict(
    vocab_size=30000,
    embedding_size=128,
    hidden_size=256,
    num_hidden_layers=4,
    num_attention_heads=4,
    intermediate_size=1024,
)


class _StepClock(keras.callbacks.Callback):
    """Wall-clock time of each training step (the ends of consecutive batches).

    A per-batch callback also makes `fit` wait for every step, as it does with
    a progress bar or any per-step logging. Without one, Keras 3 hands the
    batch-end work to a thread pool, and on this 2-core machine whole runs
    of either library then took 0.17 s per step or a multiple of it, up to
    twice as long as with the callback (keras-hub's small config at 8 x 128:
    23.4 seq/s without, 49.5 with it).
    """

    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def time_fits(runs, steps, repeats):
    """Median steps per second of each (model, dataset), in alternating rounds.

    Returns two lists: steps per wall-clock second (from the median step
    time of all rounds, `_StepClock`), and steps per second of this process's
    CPU time (user + system, all threads). Alternating keeps slow drifts of a
    shared machine from favouring whichever model runs last; the CPU-time
    rate hardly moves when other jobs share the cores, where the wall-clock
    rate does.
    """
    print(f"compiling {len(runs)} models...", file=sys.stderr, flush=True)
    for model, dataset in runs:
        model.fit(dataset, steps_per_epoch=3, epochs=1, verbose=0)  # compile
    step_times = [[] for _ in runs]
    cpu = [[] for _ in runs]
    for round_ in range(repeats):
        print(f"round {round_ + 1}/{repeats}...", file=sys.stderr, flush=True)
        for i, (model, dataset) in enumerate(runs):
            clock = _StepClock()
            start_cpu = time.process_time()
            model.fit(
                dataset,
                steps_per_epoch=steps,
                epochs=1,
                verbose=0,
                callbacks=[clock],
            )
            cpu[i].append(steps / (time.process_time() - start_cpu))
            step_times[i].extend(np.diff(clock.ends).tolist())
    return [1 / statistics.median(t) for t in step_times], [
        statistics.median(r) for r in cpu
    ]


def compare(
    batch, length, predictions, steps, repeats, config=None, seed=0, dtype=None
):
    """Our MLM + SOP `fit` vs keras-hub's MLM-only `AlbertMaskedLM.fit`.

    Same synthetic batches, same sizes, LAMB, `jit_compile=True`, alternating
    rounds in this process (`time_fits`). Ours is timed twice: with
    `FastLamb` (as `albert-keras pretrain` trains) and with
    `keras.optimizers.Lamb` (keras-hub's optimizer).

    Args:
        batch, length, predictions: batch size, sequence length, masked
            positions per sequence.
        steps, repeats: steps per timed `fit`, rounds (the median is kept).
        config: `AlbertConfig` keyword arguments (default: `SMALL`); its
            `vocab_size`, sizes and dropout are given to both models.
        seed: data and initialization seed.
        dtype: dtype policy of all three models (e.g. "mixed_bfloat16";
            default float32).

    Returns:
        dict with sequences/s of each (`ours_seq_per_s`,
        `ours_keras_lamb_seq_per_s`, `keras_hub_seq_per_s`), per CPU-second,
        and the ratios (`ratio`, `ratio_with_keras_lamb`, `cpu_ratio`, ...).
    """
    import keras_hub

    config = dict(SMALL, **(config or {}))
    vocab = config["vocab_size"]
    x, y = bench_accelerator.pretraining_batches(
        batch * 16, length, predictions, vocab, seed
    )

    ours_data = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .batch(batch, drop_remainder=True)
        .cache()
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )
    hub_data = (
        tf.data.Dataset.from_tensor_slices((x, y["mask_ids"], y["mask_weights"]))
        .batch(batch, drop_remainder=True)
        .cache()
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )

    ours = []
    for optimizer in (FastLamb(learning_rate=1e-3), keras.optimizers.Lamb(1e-3)):
        keras.utils.set_random_seed(seed)
        model = AlbertPretrainer(AlbertBackbone(AlbertConfig(**config), dtype=dtype))
        model.compile(optimizer=optimizer, jit_compile=True)
        ours.append(model)
    keras.utils.set_random_seed(seed)
    hub = keras_hub.models.AlbertMaskedLM(
        keras_hub.models.AlbertBackbone(
            vocabulary_size=vocab,
            num_layers=config["num_hidden_layers"],
            num_heads=config["num_attention_heads"],
            embedding_dim=config["embedding_size"],
            hidden_dim=config["hidden_size"],
            intermediate_dim=config["intermediate_size"],
            dropout=config.get("hidden_dropout_prob", 0.0),
            max_sequence_length=max(length, 512),
            dtype=dtype,
        )
    )
    hub.compile(
        optimizer=keras.optimizers.Lamb(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=[],
        jit_compile=True,
    )
    (ours_steps, keras_lamb_steps, hub_steps), (ours_cpu, keras_lamb_cpu, hub_cpu) = (
        time_fits(
            [(ours[0], ours_data), (ours[1], ours_data), (hub, hub_data)],
            steps,
            repeats,
        )
    )
    return {
        "config": {k: config[k] for k in sorted(config)},
        "batch": batch,
        "length": length,
        "predictions": predictions,
        "dtype": dtype or "float32",
        "load_average": os.getloadavg()[0],
        "ours_seq_per_s": ours_steps * batch,
        "ours_keras_lamb_seq_per_s": keras_lamb_steps * batch,
        "keras_hub_seq_per_s": hub_steps * batch,
        "ratio": ours_steps / hub_steps,
        "ratio_with_keras_lamb": keras_lamb_steps / hub_steps,
        "ours_seq_per_cpu_s": ours_cpu * batch,
        "ours_keras_lamb_seq_per_cpu_s": keras_lamb_cpu * batch,
        "keras_hub_seq_per_cpu_s": hub_cpu * batch,
        "cpu_ratio": ours_cpu / hub_cpu,
        "cpu_ratio_with_keras_lamb": keras_lamb_cpu / hub_cpu,
    }


def print_comparison(result, target=None):
    header = f"model ({result['dtype']})"
    print(f"{header:<52}{'seq/s':>10}{'seq/CPU-s':>12}")
    for name, key in (
        ("albert-keras AlbertPretrainer MLM+SOP, FastLamb", "ours"),
        ("albert-keras AlbertPretrainer MLM+SOP, keras Lamb", "ours_keras_lamb"),
        ("keras-hub AlbertMaskedLM MLM only, keras Lamb", "keras_hub"),
    ):
        print(
            f"{name:<52}{result[key + '_seq_per_s']:>10.1f}"
            f"{result[key + '_seq_per_cpu_s']:>12.1f}"
        )
    print(
        f"ratio ours / keras-hub: {result['ratio']:.2f}x wall clock, "
        f"{result['cpu_ratio']:.2f}x CPU time"
        + (f" (target >= {target}x)" if target else "")
        + f"; with keras Lamb: {result['ratio_with_keras_lamb']:.2f}x, "
        f"{result['cpu_ratio_with_keras_lamb']:.2f}x"
        + f"; load average {result['load_average']:.1f} on {os.cpu_count()} cores"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--dropout",
        type=float,
        default=0.0,
        help="hidden and attention dropout of both models (v1 configs: 0.1)",
    )
    parser.add_argument(
        "--dtype",
        default=None,
        help="dtype policy of all three models, e.g. mixed_bfloat16 (default float32)",
    )
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args(argv)
    if min(args.batch, args.length, args.predictions, args.steps, args.repeats) < 1:
        parser.error("--batch, --length, --predictions, --steps, --repeats: at least 1")
    if args.predictions > args.length:
        parser.error(f"--predictions {args.predictions} > --length {args.length}")
    if args.dtype:
        try:
            keras.dtype_policies.get(args.dtype)
        except ValueError:
            parser.error(
                f"--dtype {args.dtype!r} is not a Keras dtype policy: e.g. "
                "float32, mixed_bfloat16, mixed_float16"
            )
    config = None
    if args.dropout:
        config = {
            "hidden_dropout_prob": args.dropout,
            "attention_probs_dropout_prob": args.dropout,
        }
    result = compare(
        args.batch,
        args.length,
        args.predictions,
        args.steps,
        args.repeats,
        config=config,
        dtype=args.dtype,
    )
    result["config"] = (
        "small (H=256, L=4, E=128, I=1024, 4 heads), vocab 30000, "
        f"dropout {args.dropout}, {result['dtype']}"
    )
    print_comparison(result, target=1.2)
    if args.output:
        write_json(args.output, result)
        print(f"results: {args.output}")


if __name__ == "__main__":
    main()
