"""Pretraining quality: held-out MLM and SOP accuracy of `albert-keras pretrain`.

A driver over the product's command, with no training of its own: it runs
`albert-keras pretrain` (data creation included) on the English corpora of the
data folder, every `--held-out-every`-th document of each held out whole, then
reads the run's `metrics.json` and `history.csv` and reports held-out MLM
accuracy against the unigram baseline (always the most frequent masked piece),
held-out SOP accuracy against chance, SOP on the last training batches (how
much is memorized) and sequences/s.

    python benchmarks/bench_pretraining_quality.py --steps 3600 --batch 64 \\
        --vocab-size 16000 --dupe-factor 16 --out quality.json
    python benchmarks/bench_pretraining_quality.py --embedded --preset albert_tiny \\
        --steps 4 --batch 8 --no-jit                    # a smoke run, about a minute

Any other flag goes to `albert-keras pretrain` unchanged, e.g. `--learning-rate
3e-3`, `--init-checkpoint runs/x/pretrainer.keras`, `--random-next-sentence`
(NSP data instead of SOP), `--split-sentences`, `--optimizer lamb_official`.
The data folder: `--data-dir`, else $ALBERT_KERAS_DATA, else `../shared/data`
beside the repository; its `pretrain/` holds the corpora.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys

CORPORA = ("en_austen.txt", "en_brown.txt", "en_news.txt")
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("ALBERT_KERAS_DATA") or os.path.join(
        REPOSITORY, "..", "shared", "data"
    )
    parser.add_argument("--data-dir", default=os.path.normpath(default_data))
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA))
    parser.add_argument(
        "--embedded", action="store_true", help="the embedded Austen corpus instead"
    )
    parser.add_argument("--preset", default="albert_small")
    parser.add_argument("--vocab-size", type=int, help="train a vocabulary first")
    parser.add_argument("--seq-length", type=int, default=64)
    parser.add_argument("--predictions", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--dupe-factor", type=int, default=4)
    parser.add_argument("--held-out-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--output-dir", default="runs/bench_pretraining_quality")
    parser.add_argument(
        "--resume", action="store_true", help="keep --output-dir (default: fresh)"
    )
    parser.add_argument("--out", help="write the results as JSON here")
    return parser.parse_known_args(argv)


def pretrain_argv(args, extra):
    """The `albert-keras pretrain` command line of this benchmark."""
    argv = ["pretrain", "--preset", args.preset, "--output-dir", args.output_dir]
    if not args.embedded:
        files = [os.path.join(args.data_dir, "pretrain", c) for c in args.corpora]
        missing = [f for f in files if not os.path.exists(f)]
        if missing:
            raise SystemExit(
                f"No corpus {missing[0]}: pass --data-dir (or set "
                "ALBERT_KERAS_DATA) to the folder whose pretrain/ holds "
                f"{', '.join(args.corpora)}, or --embedded."
            )
        argv += ["--input", *files]
    if args.vocab_size:
        argv += ["--vocab-size", str(args.vocab_size)]
    for flag, value in (
        ("--max-seq-length", args.seq_length),
        ("--max-predictions-per-seq", args.predictions),
        ("--batch-size", args.batch),
        ("--steps", args.steps),
        ("--dupe-factor", args.dupe_factor),
        ("--held-out-every", args.held_out_every),
        ("--seed", args.seed),
        ("--save-every", args.steps),  # one checkpoint, at the end
        ("--steps-per-epoch", min(100, args.steps)),
    ):
        argv += [flag, str(value)]
    return argv + list(extra)


def read_results(output_dir):
    """The held-out metrics and the last epoch's training figures of a run."""
    with open(os.path.join(output_dir, "metrics.json")) as f:
        metrics = json.load(f)
    with open(os.path.join(output_dir, "history.csv")) as f:
        last = list(csv.DictReader(f))[-1]
    return {
        "steps": metrics["global_step"],
        "train_seconds": metrics["train_seconds"],
        "held_out_mlm_accuracy": metrics["eval_mlm_accuracy"],
        "unigram_baseline": metrics["eval_mlm_unigram_baseline"],
        "held_out_sop_accuracy": metrics["eval_sop_accuracy"],
        "training_sop_accuracy": float(last["sop_accuracy"]),
        "seq_per_s": float(last["seq_per_sec"]),
    }


MARK = "bench_pretraining_quality.mark"


def fresh_output_dir(folder):
    """Empties `folder` for a fresh run, if it is this benchmark's or empty.

    A folder this benchmark did not make (a real pretraining run given as
    --output-dir by mistake) is refused, never deleted.
    """
    if os.path.isdir(folder) and os.listdir(folder):
        if not os.path.exists(os.path.join(folder, MARK)):
            raise SystemExit(
                f"{folder} holds files this benchmark did not write (a "
                "pretraining run?); it empties its --output-dir for a fresh "
                "run. Pass another --output-dir, or --resume to go on with it."
            )
        shutil.rmtree(folder)
    os.makedirs(folder, exist_ok=True)
    from albert_keras.atomic_files import write_json

    write_json(os.path.join(folder, MARK), {"made_by": "bench_pretraining_quality"})


def main(argv=None):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    args, extra = parse_args(argv)
    command = pretrain_argv(args, extra)
    if not args.resume:
        fresh_output_dir(args.output_dir)
    print("albert-keras " + " ".join(command), flush=True)
    from albert_keras.cli import main as albert_keras

    if albert_keras(command):
        raise SystemExit("albert-keras pretrain failed")
    result = read_results(args.output_dir)
    mlm, unigram = result["held_out_mlm_accuracy"], result["unigram_baseline"]
    corpus = "the embedded corpus" if args.embedded else ", ".join(args.corpora)
    print(
        f"\n{args.preset} on {corpus}, {result['steps']} steps of {args.batch} x "
        f"{args.seq_length} in {result['train_seconds']:.0f} s "
        f"({result['seq_per_s']:.1f} seq/s in the last epoch)\n"
        f"held-out MLM accuracy {mlm:.3f} vs unigram baseline {unigram:.3f} "
        f"({mlm / unigram:.2f}x)\n"
        f"held-out SOP accuracy {result['held_out_sop_accuracy']:.3f} (chance "
        f"0.5; the last training batches: {result['training_sop_accuracy']:.3f})"
    )
    if args.out:
        from albert_keras.atomic_files import write_json

        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        write_json(args.out, {"command": command, **result})
        print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
