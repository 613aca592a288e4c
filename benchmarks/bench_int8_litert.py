"""int8 and LiteRT inference of an ALBERT classifier vs float32 Keras, same run.

For one classifier (ALBERT-base shape, random weights, or `--model` a
fine-tuned `.keras`), batch 8 x 128 by default:

- Keras on the CPU: float32 under XLA (the fastest float32 path, as in
  bench_backbone_inference.py) against `quantize("int8")` with and without
  XLA, in sequences per second, alternating rounds; the ratio int8 / float32;
  the max abs diff of the int8 logits from the float32 ones.
- LiteRT (`export_litert`, ai-edge-litert interpreter): the float32 and
  dynamic-range int8 file sizes against the parameter bytes (the shared
  block stored once: ~1.0x and ~0.25x), latency per batch, the ratio to
  float32 Keras, and the max abs diff of their logits from Keras float32.

    python benchmarks/bench_int8_litert.py [--model best.keras] [--out r.json]
    python benchmarks/bench_int8_litert.py --smoke     # tiny config, < 1 min
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.models.litert_export import export_litert  # noqa: E402

SMOKE_CONFIG = dict(
    vocab_size=8000,  # the embedded SentencePiece model's, for --dev
    embedding_size=32,
    hidden_size=64,
    num_hidden_layers=4,
    num_attention_heads=2,
    intermediate_size=128,
    max_position_embeddings=64,
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="base", help="(default: %(default)s)")
    parser.add_argument("--model", help="a fine-tuned classifier .keras instead")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=30.0, help="per path")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument(
        "--dev",
        help="a labelled .jsonl (text, label), e.g. rt_sentiment's dev.jsonl: the "
        "accuracy of every path and its agreement with Keras float32",
    )
    parser.add_argument(
        "--vocab", help="for --dev (default: beside --model, or the embedded one)"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny config, 2 x 16")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    for flag, path in (("--model", args.model), ("--dev", args.dev)):
        if path and not os.path.isfile(path):
            parser.error(f"{flag} {path!r} not found: pass an existing file")
    if args.vocab and not os.path.exists(args.vocab):
        parser.error(f"--vocab {args.vocab!r} not found: pass an existing file")
    if args.batch < 1 or args.length < 2 or args.seconds <= 0:
        parser.error("--batch must be at least 1, --length 2, --seconds above 0")
    if args.smoke:
        args.batch, args.length = 2, 16
        args.seconds = min(args.seconds, 1.0)
    return args


def build_classifier(args):
    if args.model:
        model = keras.saving.load_model(args.model, compile=False)
        return getattr(model, "task_model", model)
    if args.smoke:
        config = AlbertConfig(**SMOKE_CONFIG)
    else:
        config = AlbertConfig.from_preset(args.preset)
    return AlbertClassifier(AlbertBackbone(config), num_classes=2)


def batch_inputs(config, batch, length):
    rng = np.random.default_rng(0)
    padding_mask = np.ones((batch, length), "int32")
    padding_mask[batch // 2 :, length // 2 :] = 0  # half the rows half padded
    return {
        "token_ids": rng.integers(5, config.vocab_size, (batch, length), "int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": padding_mask,
    }


def quantized_copy(model):
    copy = model.__class__.from_config(model.get_config())
    copy.set_weights(model.get_weights())
    copy.quantize("int8")
    return copy


def alternating_medians(calls, seconds):
    """Median seconds per call of each callable, measured in alternating rounds."""
    for call in calls.values():
        call()
        call()  # compiled and warm
    times = {name: [] for name in calls}
    deadline = time.perf_counter() + seconds * len(calls)
    while time.perf_counter() < deadline or min(map(len, times.values())) < 3:
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def keras_call(model, inputs, jit):
    tensors = {k: tf.constant(v) for k, v in inputs.items()}

    @tf.function(jit_compile=jit, autograph=False)
    def logits(x):
        return model(x, training=False)["logits"]

    return lambda: logits(tensors).numpy()


def litert_call(path, inputs, threads):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=threads)
    runner = interpreter.get_signature_runner("serving_default")
    return lambda: runner(**inputs)["logits"]


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def measure(args):
    model = build_classifier(args)
    config = model.backbone.config
    inputs = batch_inputs(config, args.batch, args.length)
    int8 = quantized_copy(model)
    with tempfile.TemporaryDirectory(prefix="bench_int8_litert-") as folder:
        dev = dev_batches(model, args) if args.dev else None
        print("exporting the LiteRT float32 and int8 files...", flush=True)
        files = {
            "litert_fp32": export_litert(model, os.path.join(folder, "fp32.tflite")),
            "litert_int8": export_litert(
                model, os.path.join(folder, "int8.tflite"), quantization="dynamic_int8"
            ),
        }
        calls = {
            "keras_fp32_xla": keras_call(model, inputs, True),
            "keras_int8_xla": keras_call(int8, inputs, True),
            "keras_int8": keras_call(int8, inputs, False),
            **{k: litert_call(path, inputs, args.threads) for k, path in files.items()},
        }
        reference = calls["keras_fp32_xla"]()
        diffs = {name: max_diff(call(), reference) for name, call in calls.items()}
        print(f"timing {len(calls)} paths, {args.seconds:g} s each...", flush=True)
        seconds = alternating_medians(calls, args.seconds)
        accuracy = dev_accuracy(model, int8, files, dev, args.threads) if dev else None
        sizes = {name: os.path.getsize(path) for name, path in files.items()}
    return {
        "config": {k: getattr(config, k) for k in SMOKE_CONFIG},
        "batch": [args.batch, args.length],
        "threads": args.threads,
        "load_average": os.getloadavg()[0],
        "parameters": model.count_params(),
        "largest_fp32_logit": float(np.max(np.abs(reference))),
        "seq_per_s": {k: args.batch / v for k, v in seconds.items()},
        "ms_per_batch": {k: 1000 * v for k, v in seconds.items()},
        "max_abs_diff_vs_keras_fp32": diffs,
        "file_bytes": sizes,
        "dev": accuracy,
    }


def dev_batches(model, args, batch_size=32):
    """(inputs, labels) batches of the --dev file, packed at --length."""
    from albert_keras.models import with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tokenizers import load_tokenizer

    vocab = args.vocab or SPM_MODEL_PATH
    if args.model and not args.vocab:
        from checkpoints_convert.backbone_loader import find_vocabulary

        vocab = find_vocabulary(args.model)
    text_model = with_tokenizer(model, load_tokenizer(vocab), args.length)
    with open(args.dev, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    batches = []
    for start in range(0, len(records), batch_size):
        chunk = records[start : start + batch_size]
        packed = text_model.pack([r["text"] for r in chunk])
        inputs = {k: np.asarray(v, "int32") for k, v in packed.items()}
        batches.append((inputs, np.array([int(r["label"]) for r in chunk])))
    return batches


def dev_accuracy(model, int8, files, batches, threads):
    """Accuracy of each path on the dev batches, and agreement with float32."""
    from ai_edge_litert.interpreter import Interpreter

    predict = {
        "keras_fp32": lambda x: model(x, training=False)["logits"],
        "keras_int8": lambda x: int8(x, training=False)["logits"],
    }
    for name, path in files.items():
        runner = Interpreter(model_path=path, num_threads=threads)
        runner = runner.get_signature_runner("serving_default")
        predict[name] = lambda x, runner=runner: runner(**x)["logits"]
    labels = np.concatenate([y for _, y in batches])
    classes = {
        name: np.concatenate([np.argmax(call(x), -1) for x, _ in batches])
        for name, call in predict.items()
    }
    return {
        "examples": len(labels),
        "accuracy": {k: float(np.mean(v == labels)) for k, v in classes.items()},
        "agreement_with_keras_fp32": {
            k: float(np.mean(v == classes["keras_fp32"])) for k, v in classes.items()
        },
    }


def report(result):
    rates, reference = result["seq_per_s"], result["seq_per_s"]["keras_fp32_xla"]
    batch, length = result["batch"]
    print(
        f"{result['parameters'] / 1e6:.1f} M parameters, batch {batch} x {length}, "
        f"{result['threads']} threads, load average {result['load_average']:.1f}; "
        "largest float32 logit "
        f"{result['largest_fp32_logit']:.3g}"
    )
    print(f"{'path':<16}{'seq/s':>9}{'ms/batch':>10}{'vs fp32':>9}{'max|diff|':>11}")
    for name, rate in rates.items():
        print(
            f"{name:<16}{rate:>9.1f}{result['ms_per_batch'][name]:>10.1f}"
            f"{rate / reference:>8.2f}x"
            f"{result['max_abs_diff_vs_keras_fp32'][name]:>11.2e}"
        )
    parameter_bytes = 4 * result["parameters"]
    for name, size in result["file_bytes"].items():
        print(
            f"{name} file: {size / 1e6:.2f} MB = {size / parameter_bytes:.3f}x the "
            f"{parameter_bytes / 1e6:.2f} MB of float32 parameters"
        )
    print(
        "ratio keras int8 / fp32 (XLA): "
        f"{max(rates['keras_int8_xla'], rates['keras_int8']) / reference:.2f}x; "
        f"ratio litert int8 / keras fp32: {rates['litert_int8'] / reference:.2f}x"
    )
    if result["dev"]:
        dev = result["dev"]
        print(f"dev accuracy on {dev['examples']} examples (agreement with fp32):")
        for name, accuracy in dev["accuracy"].items():
            agreement = dev["agreement_with_keras_fp32"][name]
            print(f"  {name:<14}{accuracy:.4f}  ({agreement:.4f})")


def main(argv=None):
    args = parse_args(argv)
    result = measure(args)
    report(result)
    if args.out:
        write_json(args.out, result)
        print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()
