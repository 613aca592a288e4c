"""Data-creation throughput: `albert-keras create-data` vs the official script.

Runs the official google-research/albert `create_pretraining_data.py` (path
given by --official-script; it is not in the PyPI package: clone
github.com/google-research/albert) and ours on the same input with the same
settings, each in a fresh process, and prints instances/s, MB/s of input and
the ratio, end to end (process start to exit) and without the imports (the
official script's TensorFlow; ours, with a SentencePiece vocabulary, imports
no TensorFlow at all, and says so). Then reads both outputs with our reader
(the official feature spec) and prints what they hold side by side:
instances, real length, masked share, SOP labels.

The official script runs under TF 2 with one shim: `tensorflow` is
`tf.compat.v1` for it (its `tokenization` module uses TF1 names).

    python benchmarks/bench_create_data.py \\
        --official-script /tmp/albert/create_pretraining_data.py \\
        --input ../shared/data/pretrain/en_austen.txt --dupe-factor 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# Run as a child: the official script under the TF1 shim, timed.
_OFFICIAL_RUNNER = r"""
import json, runpy, sys, time
start = time.perf_counter()
import tensorflow as tf
sys.modules["tensorflow"] = tf.compat.v1
imported = time.perf_counter()
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    if e.code not in (0, None):
        raise
done = time.perf_counter()
print("TIMING " + json.dumps({"core": done - imported, "import": imported - start}))
"""

_OURS_RUNNER = r"""
import json, sys, time
start = time.perf_counter()
from albert_keras.pretraining.pretraining_data import create_pretraining_data
imported = time.perf_counter()
kwargs = json.loads(sys.argv[1])
stats = create_pretraining_data(verbose=False, **kwargs)
done = time.perf_counter()
print("TIMING " + json.dumps({"core": done - imported, "import": imported - start,
                             "instances": stats["instances"],
                             "tensorflow": "tensorflow" in sys.modules}))
"""


def _timed(name, command, env):
    import time

    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"{name} data creation failed (its output is above)")
    line = [x for x in result.stdout.splitlines() if x.startswith("TIMING ")][-1]
    timing = json.loads(line[len("TIMING ") :])
    timing["wall"] = wall
    return timing


def _summary(pattern, max_seq_length, max_predictions):
    import numpy as np

    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

    n = tokens = masked = ones = 0
    for batch in pretraining_dataset(
        pattern, 512, max_seq_length, max_predictions, training=False
    ):
        mask = batch["input_mask"].numpy()
        n += len(mask)
        tokens += int(mask.sum())
        masked += float(np.sum(batch["masked_lm_weights"].numpy()))
        ones += int(batch["next_sentence_labels"].numpy().sum())
    return {
        "instances": n,
        "mean_length": tokens / max(n, 1),
        "masked_share": masked / max(tokens, 1),
        "label_1_share": ones / max(n, 1),
    }


def parse_args(argv=None):
    """The flags, checked: every file named exists."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = [
        os.environ.get("ALBERT_KERAS_DATA", ""),
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"),
    ]
    default_input = next(
        (
            os.path.normpath(os.path.join(folder, *sub, "en_austen.txt"))
            for folder in shared
            if folder
            for sub in (("pretrain",), ("data", "pretrain"))
            if os.path.isfile(os.path.join(folder, *sub, "en_austen.txt"))
        ),
        None,
    )
    parser.add_argument(
        "--input",
        default=default_input,
        help="text file (default: shared/data/pretrain/en_austen.txt)",
    )
    parser.add_argument("--official-script", help="create_pretraining_data.py")
    parser.add_argument("--vocab", help="SentencePiece .model (default: embedded)")
    parser.add_argument("--max-seq-length", type=int, default=512)
    parser.add_argument("--max-predictions-per-seq", type=int, default=20)
    parser.add_argument("--dupe-factor", type=int, default=1)
    parser.add_argument("--num-workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="median of N runs")
    parser.add_argument("--output-dir", help="default: a temporary folder")
    args = parser.parse_args(argv)
    if not args.input or not os.path.isfile(args.input):
        parser.error(
            f"input {args.input!r} not found: pass --input or set "
            "ALBERT_KERAS_DATA to the shared data folder"
        )
    if args.official_script and not os.path.isfile(args.official_script):
        parser.error(
            f"--official-script {args.official_script!r} not found: clone "
            "github.com/google-research/albert and pass its "
            "create_pretraining_data.py"
        )
    if args.vocab and not os.path.isfile(args.vocab):
        parser.error(f"--vocab {args.vocab!r} not found: pass a SentencePiece .model")
    if args.rounds < 1 or args.dupe_factor < 1:
        parser.error("--rounds and --dupe-factor must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    from albert_keras.sample_text import SPM_MODEL_PATH

    vocab = args.vocab or SPM_MODEL_PATH
    out = args.output_dir or tempfile.mkdtemp(prefix="bench_create_data_")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    size_mb = os.path.getsize(args.input) / 1e6
    print(
        f"input {args.input} ({size_mb:.2f} MB), max_seq_length "
        f"{args.max_seq_length}, max_predictions {args.max_predictions_per_seq}, "
        f"dupe_factor {args.dupe_factor}, workers {args.num_workers}, median of "
        f"{args.rounds} round(s)"
    )
    ours_kwargs = dict(
        input_files=[args.input],
        output=os.path.join(out, "ours", ""),
        vocab=vocab,
        max_seq_length=args.max_seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        dupe_factor=args.dupe_factor,
        num_workers=args.num_workers,
    )
    official_out = os.path.join(out, "official.tfrecord")
    official_command = [
        sys.executable,
        "-c",
        _OFFICIAL_RUNNER,
        str(args.official_script),
        f"--input_file={args.input}",
        f"--output_file={official_out}",
        f"--vocab_file={vocab}",
        f"--spm_model_file={vocab}",
        f"--max_seq_length={args.max_seq_length}",
        f"--max_predictions_per_seq={args.max_predictions_per_seq}",
        f"--dupe_factor={args.dupe_factor}",
        "--do_lower_case=true",
    ]
    # Alternate the two programs and take medians: other jobs on the
    # machine come and go.
    timings = {"ours": [], "official": []}
    ours_command = [sys.executable, "-c", _OURS_RUNNER, json.dumps(ours_kwargs)]
    try:
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds}: ours...", flush=True)
            timings["ours"].append(_timed("our", ours_command, env))
            if args.official_script:
                print(f"round {i + 1}/{args.rounds}: official...", flush=True)
                timings["official"].append(
                    _timed("the official", official_command, env)
                )
        outputs = {"ours": os.path.join(out, "ours", "*.tfrecord")}
        if args.official_script:
            outputs["official"] = official_out
        _report(args, outputs, timings, size_mb)
    finally:  # a failed run leaves no temporary folder behind either
        if not args.output_dir:
            shutil.rmtree(out, ignore_errors=True)


def _report(args, outputs, timings, size_mb):
    """What each output holds, the rates and, with the official run, the ratios."""
    results = {}
    for name, pattern in outputs.items():
        timing = {
            k: statistics.median(t[k] for t in timings[name]) for k in ("wall", "core")
        }
        summary = _summary(pattern, args.max_seq_length, args.max_predictions_per_seq)
        results[name] = (timing, summary)
        n = summary["instances"]
        print(
            f"{name:>8}: {n} instances, mean length {summary['mean_length']:.1f}, "
            f"masked {summary['masked_share']:.4f}, label 1 "
            f"{summary['label_1_share']:.3f} | end to end {timing['wall']:.1f} s "
            f"({n / timing['wall']:.0f} instances/s, {size_mb / timing['wall']:.2f} "
            f"MB/s) | without imports {timing['core']:.1f} s "
            f"({n / timing['core']:.0f} instances/s, "
            f"{size_mb * 1.0 / timing['core']:.2f} MB/s)"
        )
    print(
        "ours imported TensorFlow: "
        + ("yes" if any(t.get("tensorflow") for t in timings["ours"]) else "no")
    )
    if "official" not in results:
        print(
            "no ratio: pass --official-script (create_pretraining_data.py of a "
            "clone of github.com/google-research/albert) to time the official script"
        )
        return
    (t_ours, s_ours), (t_off, s_off) = results["ours"], results["official"]
    for label, key in (("end to end", "wall"), ("without imports", "core")):
        ratio = (s_ours["instances"] / t_ours[key]) / (s_off["instances"] / t_off[key])
        time_ratio = t_off[key] / t_ours[key]
        print(
            f"speedup {label}: {time_ratio:.1f}x in time, {ratio:.1f}x in "
            "instances/s (target >= 5x)"
        )


if __name__ == "__main__":
    main()
