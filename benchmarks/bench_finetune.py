"""Fine-tuning: dev results of a pretrained small ALBERT vs random init vs baselines.

For every task in ../shared/data/tasks, fine-tunes (`run_finetuning`, the
code of `albert-keras finetune`) the same small model twice: from a
pretrained `pretrainer.keras` (of `albert-keras pretrain`) and from random
initialization with the same vocabulary, and prints the best dev epoch of
each next to the majority-class (or always-no-answer) baseline. Then it
times fine-tuning steps of `AlbertClassifier` against keras-hub's
`AlbertTextClassifier` on the same packed batches, in the same process.

    python benchmarks/bench_finetune.py --pretrained runs/pretrain/pretrainer.keras \\
        [--zh-pretrained runs/pretrain_zh/pretrainer.keras] [--train-examples 4000]

Without --pretrained, `albert-keras pretrain` (the embedded default job) runs
first. Chinese (zh_sentiment) needs a model pretrained with a WordPiece
vocabulary (--zh-pretrained; its vocab.txt beside it); without one it runs
from random init only, with a vocabulary learned from its training texts.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from albert_keras.tasks.span_predictions import NULL_SCORES  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# task name -> (task type, train file, dev file, monitored metric, target)
TASKS = {
    "rt_sentiment": ("classify", "train.jsonl", "dev.jsonl", "accuracy", 0.70),
    "vitaminc": ("pair", "train.jsonl", "dev.jsonl", "accuracy", None),
    "social_iqa": ("choice", "train.jsonl", "dev.jsonl", "accuracy", None),
    "disfl_qa": ("squad", "train.json", "dev.json", "best_f1", None),
    "zh_sentiment": ("classify", "train.jsonl", "dev.jsonl", "accuracy", 0.80),
}


def _default_data():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get(
        "ALBERT_KERAS_SHARED_DATA", os.path.join(here, "..", "shared", "data")
    )


def _pretrain_default(output_dir):
    from albert_keras.cli import main

    print(f"No --pretrained: running `albert-keras pretrain` into {output_dir}")
    if main(["pretrain", "--output-dir", output_dir]):
        raise SystemExit("albert-keras pretrain failed")
    return os.path.join(output_dir, "pretrainer.keras")


def _zh_vocabulary(train_file, output_dir):
    from albert_keras.tokenizers import build_wordpiece_vocabulary

    os.makedirs(output_dir, exist_ok=True)
    return build_wordpiece_vocabulary(
        [train_file], os.path.join(output_dir, "zh_vocab.txt"), vocab_size=8000
    )


def _plan(args):
    """(name, task, train, dev, init label, init, vocab) of every run."""
    from albert_keras.tasks.finetune_run import find_vocabulary

    plan = []
    for name in args.tasks:
        task, train, dev, _, _ = TASKS[name]
        folder = os.path.join(args.data, "tasks", name)
        train, dev = os.path.join(folder, train), os.path.join(folder, dev)
        pretrained = args.zh_pretrained if name.startswith("zh_") else args.pretrained
        if pretrained is not None:
            vocab = find_vocabulary(pretrained, None)
            plan.append((name, task, train, dev, "pretrained", pretrained, vocab))
        else:
            vocab = _zh_vocabulary(train, args.output)
        plan.append((name, task, train, dev, "random", "albert_small", vocab))
    return plan


def _finetune_args(args, task, train, dev, init, vocab):
    return dict(
        task=task,
        train=train,
        dev=dev,
        init=init,
        vocab=vocab,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_fraction=0.1,
        sequence_length=args.sequence_length,
        max_train_examples=args.train_examples,
        max_dev_examples=args.dev_examples,
        patience=args.epochs,
        head=args.squad_head,
        seed=0,
        doc_stride=64,
        max_query_length=32,
        max_answer_length=30,
        null_window_fraction=args.null_window_fraction,
        null_score=args.null_score,
        start_n_top=5,
        end_n_top=5,
    )


def prepare(args):
    """Tokenizes and packs every task here (TensorFlow), for `--from-prepared`.

    Writes DIR/<task>.pkl (packed numpy features, labels, what scoring needs)
    and copies the pretrained models and vocabularies, so that training and
    evaluation can run where TensorFlow is absent (e.g. JAX on a GPU).
    """
    import pickle
    import shutil

    from albert_keras.tasks.finetune_run import _Task
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer

    os.makedirs(args.prepare, exist_ok=True)
    done = set()
    for name, task, train, dev, label, init, vocab in _plan(args):
        if name in done:  # both runs of a task share its data
            continue
        done.add(name)
        settings = _finetune_args(args, task, train, dev, init, vocab)
        job = _Task(task, settings, load_tokenizer(vocab))
        job.read()
        state = {
            "name": name,
            "settings": settings,
            "train": _materialize(job.train_data),
            "dev": _materialize(job.dev_data),
            "labels": job.labels,
            "baselines": job.baselines(),
            "vocabulary_size": job.tokenizer.vocabulary_size(),
        }
        if task == "squad":
            for key in ("dev_features", "dev_contexts", "dev_examples", "dev_json"):
                state[key] = getattr(job, key)
        else:
            state["dev_labels"] = job.dev_labels
            state["train_labels"] = job.train_labels
        if label == "pretrained":
            folder = "pretrained_zh" if name.startswith("zh_") else "pretrained_en"
            os.makedirs(os.path.join(args.prepare, folder), exist_ok=True)
            shutil.copy(init, os.path.join(args.prepare, folder, "pretrainer.keras"))
            state["pretrained"] = f"{folder}/pretrainer.keras"
        state["train"], state["dev"] = _compact(state["train"]), _compact(state["dev"])
        with gzip.open(os.path.join(args.prepare, f"{name}.pkl.gz"), "wb") as f:
            pickle.dump(state, f)
        rows = len(next(iter(state["train"][0].values())))
        print(f"prepared {name}: {rows} training rows", flush=True)


def _compact(tree):
    """Integer arrays in their smallest dtype (ids < 65536): small to carry."""

    def shrink(v):
        if v.dtype.kind in "iu" and v.size and v.min() >= 0:
            return v.astype("uint8" if v.max() < 256 else "uint16")
        return v

    return keras.tree.map_structure(shrink, tree)


def _widen(tree):
    def widen(v):
        return v.astype("int32") if v.dtype in (np.uint8, np.uint16) else v

    return keras.tree.map_structure(widen, tree)


def _materialize(dataset):
    """One pass of a (features, targets) tf.data pipeline as numpy arrays."""
    batches = list(dataset.as_numpy_iterator())
    return keras.tree.map_structure(lambda *v: np.concatenate(v), *batches)


def from_prepared(args):
    """Fine-tunes from `prepare`'s files with any Keras backend; no TensorFlow."""
    import glob
    import pickle

    from albert_keras.tasks.dev_evaluation import DevEvaluation
    from albert_keras.tasks.finetune_run import MONITOR, _Task, load_backbone
    from albert_keras.training.optimizers import create_optimizer

    rows = {}
    for path in sorted(glob.glob(os.path.join(args.from_prepared, "*.pkl.gz"))):
        with gzip.open(path, "rb") as f:
            state = pickle.load(f)
        state["train"], state["dev"] = _widen(state["train"]), _widen(state["dev"])
        name, settings = state["name"], state["settings"]
        task = settings["task"]
        inits = {"random": "albert_small"}
        if state.get("pretrained"):
            inits = {
                "pretrained": os.path.join(args.from_prepared, state["pretrained"]),
                **inits,
            }
        row = rows.setdefault(
            name, {"task": name, "metric": MONITOR[task], "target": TASKS[name][4]}
        )
        for label, init in inits.items():
            if label in row:
                continue
            keras.backend.clear_session()
            keras.utils.set_random_seed(0)
            job = _Task(task, settings, tokenizer=None)
            job.labels = state["labels"]
            x_dev, _ = state["dev"]
            job.dev_data = x_dev
            for key in ("dev_features", "dev_contexts", "dev_examples", "dev_json"):
                if key in state:
                    setattr(job, key, state[key])
            if task != "squad":
                job.dev_labels = state["dev_labels"]
                job.train_labels = state["train_labels"]
            backbone = load_backbone(
                init, state["vocabulary_size"], settings["sequence_length"]
            )
            model, losses, weights = job.build(backbone)
            x, y = state["train"]
            steps = -(-len(next(iter(x.values()))) // settings["batch_size"])
            steps *= settings["epochs"]
            model.compile(
                optimizer=create_optimizer(
                    "adamw", settings["learning_rate"], steps, steps // 10
                ),
                loss=losses,
                loss_weights=weights,
                jit_compile=True,
            )
            evaluation = DevEvaluation(job.score)
            started = time.perf_counter()
            model.fit(
                x,
                y,
                batch_size=settings["batch_size"],
                epochs=settings["epochs"],
                shuffle=True,
                callbacks=[evaluation],
                verbose=args.verbose,
            )
            seconds = time.perf_counter() - started
            best = max(evaluation.history, key=lambda h: h[row["metric"]])
            _record(row, label, best, seconds, state["baselines"])
            print(f"{name} {label}: {best} ({seconds:.0f} s)", flush=True)
    return list(rows.values())


def _record(row, label, best, seconds, baselines):
    """Puts one run's best dev metric and the task's baseline into its row."""
    row[label] = best.get(row["metric"])
    row[f"{label}_all"] = best
    row[f"{label}_seconds"] = seconds
    baseline_name, baseline = next(iter(baselines.items()))
    key = "f1" if row["metric"] == "best_f1" else row["metric"]
    row["baseline"] = f"{baseline_name} {baseline[key]:.3f}"
    row["baseline_value"] = baseline[key]  # the scale of the metric (F1: 0-100)


def quality(args):
    from albert_keras.tasks.finetune_run import run_finetuning

    rows = {}
    for name, task, train, dev, label, init, vocab in _plan(args):
        _, _, _, metric, target = TASKS[name]
        row = rows.setdefault(name, {"task": name, "metric": metric, "target": target})
        print(f"\n=== {name}: {label} ({init})", flush=True)
        keras.backend.clear_session()
        result = run_finetuning(
            **_finetune_args(args, task, train, dev, init, vocab),
            output_dir=os.path.join(args.output, f"{name}_{label}"),
            verbose=args.verbose,
        )
        _record(
            row, label, result["best"], result["train_seconds"], result["baselines"]
        )
    return list(rows.values())


def speed(args):
    """Fine-tuning seq/s: AlbertClassifier vs keras-hub AlbertTextClassifier."""
    import keras_hub
    import tensorflow as tf
    from bench_pretraining_step import time_fits

    from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig

    # keras-hub's backbone has no dropout by default; ours as v2 (also none).
    small = AlbertConfig.from_preset(
        "albert_small",
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
    ours = AlbertClassifier(AlbertBackbone(small), num_classes=2)
    ours.compile(
        optimizer=keras.optimizers.AdamW(1e-4), loss={"logits": loss}, jit_compile=True
    )
    hub = keras_hub.models.AlbertTextClassifier(
        keras_hub.models.AlbertBackbone(
            vocabulary_size=30000,
            num_layers=small.num_hidden_layers,
            num_heads=small.num_attention_heads,
            embedding_dim=small.embedding_size,
            hidden_dim=small.hidden_size,
            intermediate_dim=small.intermediate_size,
        ),
        num_classes=2,
        preprocessor=None,
    )
    hub.compile(optimizer=keras.optimizers.AdamW(1e-4), loss=loss, jit_compile=True)
    (ours_steps, hub_steps), (ours_cpu, hub_cpu) = time_fits(
        [(ours, dataset({"logits": y})), (hub, dataset(y))], 20, args.repeats
    )
    return {
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=_default_data())
    parser.add_argument("--pretrained", help="pretrainer.keras (English)")
    parser.add_argument("--zh-pretrained", help="pretrainer.keras (WordPiece, zh)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--train-examples", type=int, default=4000)
    parser.add_argument("--dev-examples", type=int)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
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
    parser.add_argument(
        "--prepare", metavar="DIR", help="only tokenize and pack into DIR (needs TF)"
    )
    parser.add_argument(
        "--from-prepared",
        metavar="DIR",
        help="fine-tune from --prepare's DIR with any Keras backend (no TF needed)",
    )
    parser.add_argument("--verbose", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.prepare:
        prepare(args)
        return
    if args.speed_only:
        rows = []
    elif args.from_prepared:
        rows = from_prepared(args)
        args.skip_speed = True
    else:
        english = [t for t in args.tasks if not t.startswith("zh_")]
        if args.pretrained is None and english:
            args.pretrained = _pretrain_default(os.path.join(args.output, "pretrain"))
        rows = quality(args)
    result = {
        "settings": vars(args),
        "backend": keras.backend.backend(),
        "device": _device(),
        "tasks": rows,
    }
    if rows:
        print(
            f"\n{'task':<14}{'metric':<10}{'pretrained':>11}{'random':>9}"
            f"{'ratio':>8}  baseline (target)"
        )
    for row in rows:
        pre, rand = row.get("pretrained"), row.get("random")
        # SQuAD F1 on its own 0-100 scale, as its baseline is printed.
        form = ".1f" if row["metric"] == "best_f1" else ".3f"
        cells = [f"{v:{form}}" if v is not None else "-" for v in (pre, rand)]
        ratio = f"{pre / rand:.2f}x" if pre is not None and rand else "-"
        target = f" (target {row['target']})" if row["target"] else ""
        print(
            f"{row['task']:<14}{row['metric']:<10}{cells[0]:>11}{cells[1]:>9}"
            f"{ratio:>8}  {row['baseline']}{target}"
        )
    if not args.skip_speed:
        result["speed"] = speed(args)
        s = result["speed"]
        print(
            f"\nfine-tuning steps, small config, batch {s['batch']} x {s['length']}: "
            f"ours {s['ours_seq_per_s']:.1f} seq/s, keras-hub AlbertTextClassifier "
            f"{s['keras_hub_seq_per_s']:.1f} seq/s: ratio {s['ratio']:.2f}x "
            f"({s['cpu_ratio']:.2f}x per CPU-second)"
        )
    result["seconds"] = time.perf_counter() - started
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "results.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(f"results: {os.path.join(args.output, 'results.json')}")


if __name__ == "__main__":
    main()
