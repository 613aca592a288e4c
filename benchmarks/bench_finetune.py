"""Fine-tuning: dev results of a pretrained small ALBERT vs random init vs baselines.

For every data set of DATA/tasks (`--data-dir`, else $ALBERT_KERAS_DATA, else
`../shared/data` beside the repository), fine-tunes the same model twice with
the code of `albert-keras finetune` (the task of `task_from_name`, trained by
`run_finetuning`): from a pretrained `pretrainer.keras` (of `albert-keras
pretrain`) and from random initialization (`--preset`) with the same
vocabulary. It prints the best dev epoch of each, their ratio, the task's
baseline (majority class, training mean, always no answer) and the better
run's ratio to it. Then it times fine-tuning steps of `AlbertClassifier`
against keras-hub's `AlbertTextClassifier` on the same packed batches, in the
same process.

    python benchmarks/bench_finetune.py --pretrained runs/pretrain/pretrainer.keras \\
        [--zh-pretrained runs/pretrain_zh/pretrainer.keras] [--train-examples 4000]

Without --pretrained, `albert-keras pretrain` (the embedded default job, with
`--preset`) runs first; `--random-only` runs from random init only. Chinese
(zh_sentiment) needs a model pretrained with a WordPiece vocabulary
(--zh-pretrained; its vocab.txt beside it); without one it runs from random
init only, with a vocabulary learned from its training texts.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.cli_help import rate_or_auto  # noqa: E402
from albert_keras.tasks import task_from_name  # noqa: E402
from albert_keras.tasks.finetuning_run import run_finetuning  # noqa: E402
from albert_keras.tasks.span_predictions import NULL_SCORES  # noqa: E402
from checkpoints_convert.backbone_loader import find_vocabulary  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DataSet = collections.namedtuple(
    "DataSet", "task fields train dev target language", defaults=(None, "en")
)
# Data set -> the `albert-keras finetune --task` name and config fields, its
# files, the accuracy aimed at and the language of the pretrained model it takes.
DATA_SETS = {
    "rt_sentiment": DataSet("classify", {}, "train.jsonl", "dev.jsonl", 0.70),
    "vitaminc": DataSet("pair", {}, "train.jsonl", "dev.jsonl"),
    "social_iqa": DataSet("choice", {}, "train.jsonl", "dev.jsonl"),
    "disfl_qa": DataSet("squad", {}, "train.json", "dev.json"),
    "zh_sentiment": DataSet("classify", {}, "train.jsonl", "dev.jsonl", 0.80, "zh"),
}


def _pretrain_default(args):
    from albert_keras.cli import main

    output_dir = os.path.join(args.output, "pretrain")
    print(f"No --pretrained: running `albert-keras pretrain` into {output_dir}")
    if main(["pretrain", "--output-dir", output_dir, "--preset", args.preset]):
        raise SystemExit("albert-keras pretrain failed")
    return os.path.join(output_dir, "pretrainer.keras")


def _task(args, data_set):
    """The data set's task; the flags set the config fields it has."""
    task = task_from_name(data_set.task, **data_set.fields)
    flags = {
        "sequence_length": args.sequence_length,
        "head": args.squad_head,
        "null_window_fraction": args.null_window_fraction,
        "null_score": args.null_score,
    }
    fields = {k: v for k, v in flags.items() if hasattr(task.config, k)}
    task.config = dataclasses.replace(task.config, **fields)
    return task


def _runs(args, name, train_file):
    """(label, init, vocab) of the data set's runs: pretrained, then random init."""
    from albert_keras.tokenizers import build_wordpiece_vocabulary

    language = DATA_SETS[name].language
    pretrained = {"en": args.pretrained, "zh": args.zh_pretrained}[language]
    if pretrained is not None and not args.random_only:
        vocab = find_vocabulary(pretrained)
        return [("pretrained", pretrained, vocab), ("random", args.preset, vocab)]
    if language == "en":
        return [("random", args.preset, find_vocabulary(args.preset))]
    # The embedded vocabulary is English: learn a WordPiece one (as *_zh).
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, f"{name}_vocab.txt")
    return [("random", args.preset, build_wordpiece_vocabulary([train_file], path))]


def quality(args):
    """One table row per data set: best dev metric of each run and the baseline."""
    rows = []
    for name in args.tasks:
        data_set = DATA_SETS[name]
        folder = os.path.join(args.data_dir, "tasks", name)
        train = os.path.join(folder, data_set.train)
        dev = os.path.join(folder, data_set.dev)
        row = {"task": name, "target": data_set.target}
        for label, init, vocab in _runs(args, name, train):
            print(f"\n=== {name}: {label} ({init})", flush=True)
            keras.backend.clear_session()
            task = _task(args, data_set)
            result = run_finetuning(
                task,
                train,
                dev,
                init=init,
                output_dir=os.path.join(args.output, f"{name}_{label}"),
                vocab=vocab,
                epochs=args.epochs,
                batch_size=args.batch_size,
                learning_rate=args.learning_rate,
                max_train_examples=args.train_examples,
                max_dev_examples=args.dev_examples,
                patience=args.epochs,
                lora_rank=args.lora_rank or None,
                verbose=args.verbose,
            )
            _record(row, label, task.monitor, result)
        rows.append(row)
    return rows


def _record(row, label, metric, result):
    """Puts one run's best dev metric and the task's first baseline into its row."""
    row["metric"] = metric
    row[label] = result["best"].get(metric)
    row[f"{label}_all"] = result["best"]
    row[f"{label}_seconds"] = result["train_seconds"]
    name, baseline = next(iter(result["baselines"].items()))
    # SQuAD's best_f1 is the f1 at the best threshold: the baseline's f1.
    value = baseline.get(metric, baseline.get(metric.removeprefix("best_")))
    row["baseline"] = f"{name} {value:.3f}"
    row["baseline_value"] = value  # on the metric's scale (SQuAD F1: 0-100)


def print_table(rows):
    print(
        f"\n{'task':<14}{'metric':<10}{'pretrained':>11}{'random':>9}{'ratio':>8}"
        f"{'vs base':>9}  baseline (target)"
    )
    for row in rows:
        pre, rand = row.get("pretrained"), row.get("random")
        form = ".1f" if row["metric"] == "best_f1" else ".3f"  # SQuAD F1: 0-100
        cells = [f"{v:{form}}" if v is not None else "-" for v in (pre, rand)]
        ratio = f"{pre / rand:.2f}x" if pre is not None and rand else "-"
        best = max((v for v in (pre, rand) if v is not None), default=None)
        base = row["baseline_value"]
        versus = f"{best / base:.2f}x" if best is not None and base else "-"
        target = f" (target {row['target']})" if row["target"] else ""
        print(
            f"{row['task']:<14}{row['metric']:<10}{cells[0]:>11}{cells[1]:>9}"
            f"{ratio:>8}{versus:>9}  {row['baseline']}{target}"
        )


def speed(args):
    """Fine-tuning seq/s: AlbertClassifier vs keras-hub AlbertTextClassifier."""
    import keras_hub
    import tensorflow as tf
    from bench_pretraining_step import time_fits

    from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    from albert_keras.training.dense_adamw import DenseAdamW

    # keras-hub's backbone has no dropout by default; ours as v2 (also none).
    config = AlbertConfig.from_preset(
        args.preset,
        vocab_size=30000,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    rng = np.random.default_rng(0)
    n, length = args.batch_size * 8, args.sequence_length
    x = {
        "token_ids": rng.integers(5, 30000, (n, length)).astype("int32"),
        "segment_ids": np.zeros((n, length), "int32"),
        "padding_mask": np.ones((n, length), "int32"),
    }
    y = rng.integers(0, 2, (n,)).astype("int32")

    def dataset(labels):
        data = tf.data.Dataset.from_tensor_slices((x, labels))
        return data.batch(args.batch_size).cache().repeat().prefetch(2)

    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ours = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    # Ours as `albert-keras finetune` trains (`DenseAdamW`: the embedding
    # gradients summed first); keras-hub with Keras' own AdamW.
    ours.compile(optimizer=DenseAdamW(1e-4), loss={"logits": loss}, jit_compile=True)
    hub = keras_hub.models.AlbertTextClassifier(
        keras_hub.models.AlbertBackbone(
            vocabulary_size=30000,
            num_layers=config.num_hidden_layers,
            num_heads=config.num_attention_heads,
            embedding_dim=config.embedding_size,
            hidden_dim=config.hidden_size,
            intermediate_dim=config.intermediate_size,
        ),
        num_classes=2,
        preprocessor=None,
    )
    hub.compile(optimizer=keras.optimizers.AdamW(1e-4), loss=loss, jit_compile=True)
    (ours_steps, hub_steps), (ours_cpu, hub_cpu) = time_fits(
        [(ours, dataset({"logits": y})), (hub, dataset(y))], 20, args.repeats
    )
    return {
        "preset": args.preset,
        "batch": args.batch_size,
        "length": length,
        "ours_seq_per_s": ours_steps * args.batch_size,
        "keras_hub_seq_per_s": hub_steps * args.batch_size,
        "ratio": ours_steps / hub_steps,
        "cpu_ratio": ours_cpu / hub_cpu,
    }


def _device():
    if keras.backend.backend() == "jax":
        import jax

        return str(jax.devices()[0].device_kind)
    return "cpu"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("ALBERT_KERAS_DATA") or os.path.join(
        REPOSITORY, "..", "shared", "data"
    )
    parser.add_argument(
        "--data-dir",
        "--data",
        default=os.path.normpath(default_data),
        help="the folder whose tasks/<data set>/ holds the files",
    )
    parser.add_argument("--pretrained", help="pretrainer.keras (English)")
    parser.add_argument("--zh-pretrained", help="pretrainer.keras (WordPiece, zh)")
    parser.add_argument("--random-only", action="store_true", help="no pretrained runs")
    parser.add_argument(
        "--preset", default="albert_small", help="the random-init model's"
    )
    parser.add_argument(
        "--tasks", nargs="+", default=list(DATA_SETS), choices=DATA_SETS
    )
    parser.add_argument("--train-examples", type=int, default=4000)
    parser.add_argument("--dev-examples", type=int)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--learning-rate",
        type=rate_or_auto,
        default="auto",
        help="peak AdamW rate; auto: by hidden size, as albert-keras finetune "
        "(2e-4 for the small config)",
    )
    parser.add_argument(
        "--lora-rank",
        type=int,
        default=0,
        help="LoRA rank of the quality runs (0: full fine-tuning)",
    )
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--squad-head", default="v2", choices=["v2", "simple"])
    parser.add_argument(
        "--null-window-fraction",
        type=float,
        default=1.0,
        help="disfl_qa: share of training windows without an answer to keep",
    )
    parser.add_argument(
        "--null-score",
        default="official",
        choices=NULL_SCORES,
        help="disfl_qa: the no-answer score thresholded on dev (see finetune)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default="runs/bench_finetune")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument(
        "--speed-only", action="store_true", help="only the seq/s comparison"
    )
    parser.add_argument("--verbose", type=int, default=2)
    return parser.parse_args(argv)


def check_inputs(args):
    """Refuses, before any training, a data folder or model file that is not there."""
    for flag in ("pretrained", "zh_pretrained"):
        path = getattr(args, flag) or ""
        looks_like_a_file = os.sep in path or path.endswith(".keras")
        if looks_like_a_file and not os.path.exists(path):
            raise SystemExit(
                f"--{flag.replace('_', '-')} {path!r} not found: pass the "
                "pretrainer.keras of an `albert-keras pretrain` run"
            )
    if args.speed_only:
        return
    for name in args.tasks:
        folder = os.path.join(args.data_dir, "tasks", name)
        for file in (DATA_SETS[name].train, DATA_SETS[name].dev):
            if not os.path.isfile(os.path.join(folder, file)):
                raise SystemExit(
                    f"No {os.path.join(folder, file)}: pass --data-dir (or set "
                    "ALBERT_KERAS_DATA) to the folder whose tasks/<data set>/ holds "
                    "the files, or choose others with --tasks"
                )


def main(argv=None):
    args = parse_args(argv)
    check_inputs(args)
    started = time.perf_counter()
    rows = []
    if not args.speed_only:
        english = [t for t in args.tasks if DATA_SETS[t].language == "en"]
        if args.pretrained is None and english and not args.random_only:
            args.pretrained = _pretrain_default(args)
        rows = quality(args)
        print_table(rows)
    result = {
        "settings": vars(args),
        "backend": keras.backend.backend(),
        "device": _device(),
        "tasks": rows,
    }
    if not args.skip_speed:
        result["speed"] = s = speed(args)
        print(
            f"\nfine-tuning steps, {s['preset']}, batch {s['batch']} x {s['length']}: "
            f"ours {s['ours_seq_per_s']:.1f} seq/s, keras-hub AlbertTextClassifier "
            f"{s['keras_hub_seq_per_s']:.1f} seq/s: ratio {s['ratio']:.2f}x "
            f"({s['cpu_ratio']:.2f}x per CPU-second)"
        )
    result["seconds"] = time.perf_counter() - started
    os.makedirs(args.output, exist_ok=True)
    write_json(os.path.join(args.output, "results.json"), result)
    print(f"results: {os.path.join(args.output, 'results.json')}")


if __name__ == "__main__":
    main()
