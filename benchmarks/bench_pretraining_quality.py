"""Pretraining quality of the small config on held-out documents, and Table 5.

The small config (H=256, L=4, E=128, I=1024, 4 heads; the `albert_small`
preset with the embedded 8000-piece vocabulary, or with `--vocab-size N` one
trained on the training documents) is pretrained on the English
corpora in `shared/data/pretrain` (en_austen, en_brown, en_news) twice with
the package's own code: once on SOP data and once on NSP data
(`random_next_sentence`), same steps, batch, schedule and seed. Every
`--held-out-every`-th document of each corpus is held out whole; from those
documents `create_pretraining_data` writes an SOP and an NSP evaluation set.
The script reports, on the held-out documents:

- SOP accuracy of the SOP-trained model (target > 0.75) and MLM accuracy next
  to the unigram baseline (`unigram_accuracy`: always the most frequent
  masked piece), and training sequences/s;
- the paper's Table 5 at small scale: both models (and the untrained model,
  for chance) on the NSP and the SOP evaluation sets. The paper: NSP-trained
  90.5 NSP / 52.0 SOP, SOP-trained 78.9 NSP / 86.5 SOP.

Two ways to run. With TensorFlow (default): data creation, then
`run_pretraining` (LAMB, warmup + decay, XLA) on the TFRecords. Or in two
halves, where the accelerator has no TensorFlow: `--prepare-only` writes the
features as one `.npz` here, and `--features FILE.npz --backend jax` trains
`AlbertPretrainer.fit` on those arrays with the same optimizer (no
TensorFlow needed).

    python benchmarks/bench_pretraining_quality.py --smoke          # ~1-2 min
    python benchmarks/bench_pretraining_quality.py --steps 2000 --minutes 10 \\
        --out quality.json
    python benchmarks/bench_pretraining_quality.py --prepare-only \\
        --work-dir runs/quality               # writes runs/quality/data-*/features.npz
    KERAS_BACKEND=jax python benchmarks/bench_pretraining_quality.py \\
        --backend jax --features runs/quality/.../features.npz --steps 20000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time

CORPORA = ("en_austen.txt", "en_brown.txt", "en_news.txt")
DEFAULT_CORPUS_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "pretrain"
)
TASKS = ("sop", "nsp")
FEATURES = (
    "input_ids",
    "input_mask",
    "segment_ids",
    "masked_lm_positions",
    "masked_lm_ids",
    "masked_lm_weights",
    "next_sentence_labels",
)
# Paper, Table 5 (ALBERT-base, intrinsic accuracies on held-out data).
PAPER_TABLE5 = {
    "nsp": {"nsp": 0.905, "sop": 0.520},
    "sop": {"nsp": 0.789, "sop": 0.865},
}


def parse_args(argv=None):
    # The package's configs load without Keras, so --backend still applies.
    from albert_keras.config import SHARING_MODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-dir", default=os.path.normpath(DEFAULT_CORPUS_DIR))
    parser.add_argument("--work-dir", default="runs/bench_pretraining_quality")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--steps", type=int, default=2000, help="per model")
    parser.add_argument(
        "--minutes", type=float, help="stop each model's training after this long"
    )
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-length", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=5e-3)
    parser.add_argument(
        "--weight-decay",
        type=float,
        default=0.01,
        help="LAMB weight decay (the official 0.01), not on LayerNorm and biases",
    )
    parser.add_argument(
        "--optimizer",
        default="lamb",
        choices=["lamb", "lamb_official"],
        help="keras.optimizers.Lamb, or the official ALBERT LAMBOptimizer's update",
    )
    parser.add_argument("--warmup-fraction", type=float, default=0.1)
    parser.add_argument(
        "--dropout",
        type=float,
        default=0.0,
        help="hidden and attention dropout while training (the small config has "
        "none; AlbertDropout keeps it fast under XLA)",
    )
    parser.add_argument("--dupe-factor", type=int, default=2)
    parser.add_argument(
        "--vocab-size",
        type=int,
        help="train a SentencePiece vocabulary of this many pieces on the "
        "training documents (held-out ones excluded) instead of using the "
        "embedded austen-8k.model, which splits news text into many more pieces",
    )
    parser.add_argument(
        "--vocab",
        help="a SentencePiece .model to use instead (e.g. the vocab.model of an "
        "earlier --vocab-size run, to continue its model with --init-model)",
    )
    parser.add_argument(
        "--held-out-every", type=int, default=10, help="hold out every k-th document"
    )
    parser.add_argument(
        "--max-documents", type=int, help="documents per corpus (short runs)"
    )
    parser.add_argument(
        "--sharing",
        default="all",
        choices=SHARING_MODES,
        help="which parameters the 4 layers share (ALBERT: all; none is the "
        "paper's not-shared ablation: 4 times the encoder parameters, same "
        "compute)",
    )
    parser.add_argument(
        "--train-fraction",
        type=float,
        default=1.0,
        help="train on this share of the training documents, evenly spaced "
        "(the vocabulary of --vocab-size is still fitted on all of them and "
        "the held-out documents are unchanged, so the evaluation set is the "
        "same as the full run's): how held-out SOP depends on the amount of text",
    )
    parser.add_argument(
        "--eval-instances", type=int, default=2048, help="per evaluation set"
    )
    parser.add_argument(
        "--eval-dupe-factor",
        type=int,
        default=1,
        help="pairings of the held-out documents (more instances, less noise: "
        "2,048 instances give a standard error of about 0.01)",
    )
    parser.add_argument("--eval-batch", type=int, default=128)
    parser.add_argument("--tasks", default="sop,nsp", help="models to train")
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="segments are sentences (split in each paragraph) instead of the "
        "corpus lines (paragraphs), which the official script and `albert-keras "
        "create-data` use by default",
    )
    parser.add_argument(
        "--mix-sentences",
        type=int,
        default=0,
        metavar="DUPE",
        help="also train SOP on sentence-segment pairs of the same training "
        "documents, made with this dupe factor (one pass per seed), mixed with "
        "the corpus-line pairs; the held-out evaluation is unchanged. A corpus "
        "line longer than the sequence is one pair per pass (cut at a random "
        "word, then truncated), so sentence segments add pairs from text the "
        "lines leave out (0: off)",
    )
    parser.add_argument(
        "--pretrained",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also evaluate this pretrainer.keras (e.g. of an earlier run or of "
        "`albert-keras pretrain`); with --tasks none, train nothing",
    )
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument(
        "--init-model",
        help="a pretrainer.keras to continue pretraining from (records only)",
    )
    parser.add_argument(
        "--save-every", type=int, help="checkpoint period in steps (default: the end)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep run-TASK/ and resume from its last checkpoint (default: fresh)",
    )
    parser.add_argument("--no-jit", action="store_true")
    parser.add_argument(
        "--reference-steps",
        type=int,
        default=10,
        help="after training, time this many steps of ours and of keras-hub's "
        "AlbertMaskedLM (MLM only) at the run's sizes, both with XLA, and print "
        "the ratio (TensorFlow backend; 0: skip)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="about a minute: 40 documents per corpus, 64 tokens, 30 steps",
    )
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="create the data and write features.npz (TensorFlow), then stop",
    )
    parser.add_argument(
        "--features", help="features.npz from --prepare-only: train on arrays"
    )
    parser.add_argument(
        "--backend", help="Keras backend (set before Keras is imported), e.g. jax"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.max_documents = args.max_documents or 40
        args.seq_length, args.predictions = 64, 10
        args.steps, args.batch = 30, 16
        args.eval_instances, args.dupe_factor = 256, 1
    if args.vocab and args.vocab_size:
        parser.error("pass --vocab or --vocab-size, not both")
    if not 0 < args.train_fraction <= 1:
        parser.error(
            f"--train-fraction is a share in (0, 1]. Received: {args.train_fraction}"
        )
    args.tasks = [t.strip() for t in args.tasks.split(",") if t.strip() != "none"]
    if not set(args.tasks) <= set(TASKS) or not (args.tasks or args.pretrained):
        parser.error(f"--tasks must name some of {TASKS}. Received: {args.tasks}")
    if args.init_model and args.features:
        parser.error("--init-model continues a run on records; drop --features")
    if args.mix_sentences and args.features:
        parser.error("--mix-sentences mixes record sets; drop --features")
    if any("=" not in p for p in args.pretrained):
        parser.error(f"--pretrained takes NAME=PATH. Received: {args.pretrained}")
    args.pretrained = [tuple(p.split("=", 1)) for p in args.pretrained]
    return args


# === Data (TensorFlow: the package's create-data) ===


def records_to_arrays(pattern, seq_length, predictions, limit=None):
    """The held-out records as NumPy feature arrays (the first `limit`)."""
    import numpy as np

    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

    batches = {k: [] for k in FEATURES}
    count = 0
    data = pretraining_dataset(pattern, 512, seq_length, predictions, training=False)
    for batch in data:
        for k in FEATURES:
            batches[k].append(batch[k].numpy())
        count += len(batches["input_ids"][-1])
        if limit and count >= limit:
            break
    return {k: np.concatenate(v)[:limit] for k, v in batches.items()}


def prepare(args):
    """Creates the SOP and NSP data once per setting; returns its description."""
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_data,
        format_stats,
    )
    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.training.pretraining_run import unigram_accuracy

    name = (
        f"data-{args.seq_length}-{args.predictions}-dupe{args.dupe_factor}"
        f"-every{args.held_out_every}-docs{args.max_documents or 'all'}-s{args.seed}"
        + ("-sentences" if args.split_sentences else "")
        + (f"-vocab{args.vocab_size}" if args.vocab_size else "")
        + (f"-{os.path.basename(args.vocab)}" if args.vocab else "")
        + (f"-evaldupe{args.eval_dupe_factor}" if args.eval_dupe_factor != 1 else "")
        + (f"-train{args.train_fraction:g}" if args.train_fraction < 1 else "")
    )
    folder = os.path.join(args.work_dir, name)
    done = os.path.join(folder, "data.json")
    if os.path.exists(done):
        with open(done) as f:
            print(f"Reusing the data in {folder}")
            info = json.load(f)
        info.setdefault("vocab_size", _pieces(info["vocab"]))
        return info
    from albert_keras.pretraining.text_documents import hold_out_documents

    train, held_out, counts = hold_out_documents(
        [os.path.join(args.corpus_dir, name) for name in CORPORA],
        os.path.join(folder, "text"),
        args.held_out_every,
        args.max_documents,
    )
    texts = {"train": train, "held_out": held_out}
    vocab = args.vocab or SPM_MODEL_PATH
    if args.vocab_size:
        from albert_keras.tokenizers.vocabulary import train_sentencepiece

        vocab = train_sentencepiece(
            texts["train"], os.path.join(folder, "vocab"), args.vocab_size
        )
        print(f"Trained {vocab} ({args.vocab_size} pieces) on the training documents")
    if args.train_fraction < 1:
        texts["train"], kept = _keep_share(
            texts["train"], args.train_fraction, os.path.join(folder, "text")
        )
        print(f"Training on {kept} documents (--train-fraction {args.train_fraction})")
    info = {
        "folder": folder,
        "documents": counts,
        "vocab": vocab,
        # The model's vocab_size; in features.npz too, for --features runs.
        "vocab_size": _pieces(vocab),
    }
    common = dict(
        vocab=vocab,
        max_seq_length=args.seq_length,
        max_predictions_per_seq=args.predictions,
        split_sentences=args.split_sentences,
    )
    for task in TASKS:
        nsp = task == "nsp"
        print(f"create-data, {task.upper()} training set:", flush=True)
        stats = create_pretraining_data(
            [texts["train"]],
            os.path.join(folder, task, "train", ""),
            random_next_sentence=nsp,
            dupe_factor=args.dupe_factor,
            seed=args.seed,
            num_shards=4,
            **common,
        )
        print(format_stats(stats))
        eval_stats = create_pretraining_data(
            [texts["held_out"]],
            os.path.join(folder, task, "eval", ""),
            random_next_sentence=nsp,
            dupe_factor=args.eval_dupe_factor,
            seed=args.seed + 1,
            num_shards=1,
            verbose=False,
            **common,
        )
        eval_pattern = os.path.join(folder, task, "eval", "*.tfrecord")
        # The baseline over exactly the evaluated instances.
        eval_data = pretraining_dataset(
            eval_pattern, 1, args.seq_length, args.predictions, training=False
        ).take(args.eval_instances)
        info[task] = {
            "train_records": os.path.join(folder, task, "train", "*.tfrecord"),
            "eval_records": eval_pattern,
            "train_instances": stats["instances"],
            "eval_instances": min(eval_stats["instances"], args.eval_instances),
            "create_data_instances_per_s": stats["instances_per_second"],
            "create_data_mb_per_s": stats["mb_per_second"],
            "unigram_accuracy": unigram_accuracy(eval_data),
        }
    with open(done, "w") as f:
        json.dump(info, f, indent=2)
    return info


def _keep_share(path, share, folder):
    """Writes an evenly spaced `share` of the documents of `path`; returns it."""
    from albert_keras.pretraining.text_documents import read_documents, write_documents

    documents = read_documents(path)
    kept = [d for i, d in enumerate(documents) if int((i + 1) * share) > int(i * share)]
    out = os.path.join(folder, f"train-{share:g}.txt")
    write_documents(out, kept)
    return out, len(kept)


def prepare_sentence_mix(args, info):
    """SOP training pairs of sentence segments (`--mix-sentences`); their glob."""
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_data,
        format_stats,
    )

    folder = os.path.join(
        info["folder"], "sop", f"train-sentences-dupe{args.mix_sentences}"
    )
    pattern = os.path.join(folder, "*.tfrecord")
    done = os.path.join(folder, "stats.json")
    if not os.path.exists(done):
        print("create-data, SOP training set of sentence segments:", flush=True)
        stats = create_pretraining_data(
            [os.path.join(info["folder"], "text", "train.txt")],
            os.path.join(folder, ""),
            vocab=info["vocab"],
            max_seq_length=args.seq_length,
            max_predictions_per_seq=args.predictions,
            split_sentences=True,
            dupe_factor=args.mix_sentences,
            seed=args.seed + 2,
            num_shards=4,
        )
        print(format_stats(stats))
        with open(done, "w") as f:
            json.dump({k: stats[k] for k in ("instances", "tokens", "seconds")}, f)
    with open(done) as f:
        info["sop"]["train_sentence_instances"] = json.load(f)["instances"]
    return pattern


def _pieces(vocab):
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=vocab).get_piece_size()


def write_features(args, info):
    """All training and held-out features in one compressed `.npz` (for `carry`)."""
    import numpy as np

    arrays = {}
    for task in TASKS:
        for split in ("train", "eval"):
            limit = args.eval_instances if split == "eval" else None
            features = records_to_arrays(
                info[task][f"{split}_records"],
                args.seq_length,
                args.predictions,
                limit,
            )
            for k, v in features.items():
                # Ids fit int16 (vocabularies up to 32767), masks int8: small.
                if k in ("input_ids", "masked_lm_ids", "masked_lm_positions"):
                    v = v.astype(np.int16)
                elif v.dtype != np.float32:
                    v = v.astype(np.int8)
                arrays[f"{task}/{split}/{k}"] = v
    arrays["info"] = np.array(json.dumps(info))
    path = os.path.join(info["folder"], "features.npz")
    np.savez_compressed(path, **arrays)
    print(f"Wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    return path


def load_features(path):
    import numpy as np

    with np.load(path) as data:
        info = json.loads(str(data["info"]))
        arrays = {task: {"train": {}, "eval": {}} for task in TASKS}
        for key in data.files:
            if key == "info":
                continue
            task, split, name = key.split("/")
            value = data[key]
            arrays[task][split][name] = (
                value if value.dtype == np.float32 else value.astype(np.int32)
            )
    return info, arrays


# === Training and evaluation (any backend on arrays; TensorFlow on records) ===


def model_config(args):
    from albert_keras import AlbertConfig

    return AlbertConfig.from_preset("albert_small").replace(
        vocab_size=args.pieces,
        max_position_embeddings=max(args.seq_length, 128),
        hidden_dropout_prob=args.dropout,
        attention_probs_dropout_prob=args.dropout,
        sharing=args.sharing,
    )


def _timing_callback(minutes):
    import keras

    class StepTimer(keras.callbacks.Callback):
        """Step end times (sequences/s after the compiled first step); time cap."""

        def __init__(self):
            super().__init__()
            self.times = []
            self.start = None

        def on_train_begin(self, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            self.times.append(time.perf_counter())
            if minutes and self.times[-1] - self.start > 60 * minutes:
                self.model.stop_training = True

        def seq_per_s(self, batch_size):
            if len(self.times) < 3:
                return float("nan")
            steady = self.times[-1] - self.times[0]
            return (len(self.times) - 1) * batch_size / steady

    return StepTimer()


def _xy(features):
    import keras

    from albert_keras import AlbertPretrainer

    x, y = AlbertPretrainer.features_to_xy(features)
    return x, {k: keras.ops.convert_to_numpy(v) for k, v in y.items()}


def train_on_arrays(args, features, task):
    """`AlbertPretrainer.fit` on NumPy features with the pretraining optimizer."""
    import keras
    import numpy as np

    from albert_keras import AlbertBackbone, AlbertPretrainer
    from albert_keras.training.optimizers import create_optimizer

    keras.utils.set_random_seed(args.seed)
    model = AlbertPretrainer(AlbertBackbone(model_config(args)))
    model.compile(
        optimizer=create_optimizer(
            args.optimizer,
            args.learning_rate,
            args.steps,
            _warmup(args),
            weight_decay=args.weight_decay,
        ),
        jit_compile=not args.no_jit,
    )
    count = len(features["input_ids"])
    rng = np.random.default_rng(args.seed)
    passes = math.ceil(args.steps * args.batch / count)
    order = np.concatenate([rng.permutation(count) for _ in range(passes)])
    order = order[: args.steps * args.batch]
    x, y = _xy({k: v[order] for k, v in features.items()})
    timer = _timing_callback(args.minutes)
    start = time.perf_counter()
    model.fit(
        x,
        y,
        batch_size=args.batch,
        epochs=1,
        shuffle=False,
        callbacks=[timer],
        verbose=2,
    )
    return model, timer, time.perf_counter() - start


def train_on_records(args, info, task):
    """The package's `run_pretraining` (TensorFlow) on the task's TFRecords."""
    import keras
    import tensorflow as tf

    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset
    from albert_keras.training.pretraining_run import run_pretraining

    keras.utils.set_random_seed(args.seed)
    output_dir = os.path.join(args.work_dir, f"run-{task}")
    if not args.resume:
        shutil.rmtree(output_dir, ignore_errors=True)  # a fresh run
    resuming = args.resume and tf.train.latest_checkpoint(
        os.path.join(output_dir, "checkpoints")
    )
    # A checkpoint replaces the init model's weights: only use it when fresh.
    # The model keeps the init model's positions when it has more (a model of
    # 256 positions continued at 128 tokens stays one of 256).
    config, init_model = model_config(args), None
    if args.init_model:
        source = keras.saving.load_model(args.init_model)
        positions = max(
            config.max_position_embeddings,
            source.backbone.config.max_position_embeddings,
        )
        config = config.replace(max_position_embeddings=positions)
        init_model = None if resuming else source

    sentences = None
    if args.mix_sentences and task == "sop":
        sentences = prepare_sentence_mix(args, info)

    def train_dataset(skip):
        if sentences is None:
            return pretraining_dataset(
                info[task]["train_records"],
                args.batch,
                args.seq_length,
                args.predictions,
                seed=args.seed,
            ).skip(skip)
        # Half of every batch from each set: an even mix at every step.
        half = args.batch // 2
        parts = [
            pretraining_dataset(
                pattern, size, args.seq_length, args.predictions, seed=args.seed + k
            )
            for k, (pattern, size) in enumerate(
                [(info[task]["train_records"], half), (sentences, args.batch - half)]
            )
        ]
        return (
            tf.data.Dataset.zip(tuple(parts))
            .map(lambda a, b: {key: tf.concat([a[key], b[key]], 0) for key in a})
            .skip(skip)
        )

    timer = _timing_callback(args.minutes)
    metrics = run_pretraining(
        train_dataset,
        config,
        output_dir,
        global_batch_size=args.batch,
        sequence_length=args.seq_length,
        num_train_steps=args.steps,
        num_warmup_steps=_warmup(args),
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        optimizer=args.optimizer,
        steps_per_epoch=min(100, args.steps),
        save_every=args.save_every or args.steps,
        jit_compile=not args.no_jit,
        init_model=init_model,
        extra_callbacks=[timer],
        verbose=2,
    )
    # The vocabulary beside pretrainer.keras, as `albert-keras pretrain`
    # writes it: `albert-keras finetune --init .../pretrainer.keras` finds it.
    shutil.copy(info["vocab"], os.path.join(output_dir, "vocab.model"))
    return metrics["model"], timer, metrics["train_seconds"]


def _warmup(args):
    return max(1, int(args.warmup_fraction * args.steps))


def sop_predictions(model, x, rows, batch):
    """The sentence head's predicted labels of `rows` instances of `x`.

    Batch by batch, keeping only the sentence head: `model.predict` would also
    gather the MLM logits of every instance (8,192 x 20 x 16,000 floats, 10 GB,
    at 128 tokens).
    """
    import keras
    import numpy as np

    return np.concatenate(
        [
            np.argmax(
                keras.ops.convert_to_numpy(
                    model.predict_on_batch(
                        {k: v[start : start + batch] for k, v in x.items()}
                    )["sop_logits"]
                ),
                axis=-1,
            )
            for start in range(0, rows, batch)
        ]
    )


def evaluate(model, features, batch):
    """MLM and sentence-head accuracy, and the head's balanced accuracy.

    Balanced accuracy (the mean of the two classes' recalls; 0.5 for any
    constant guess) is what compares across evaluation sets with different
    label shares: NSP data made from paragraph lines is mostly label 1 (a lone
    segment is paired with another document, as in the official code).
    """
    import numpy as np

    x, y = _xy(features)
    result = model.evaluate(x, y, batch_size=batch, verbose=0, return_dict=True)
    labels = np.asarray(y["sop_labels"]).reshape(-1)
    predicted = sop_predictions(model, x, len(labels), batch)
    recalls = [np.mean(predicted[labels == c] == c) for c in (0, 1) if any(labels == c)]
    return {
        "mlm_accuracy": result["mlm_accuracy"],
        "sop_accuracy": result["sop_accuracy"],
        "balanced_accuracy": float(np.mean(recalls)),
    }


# === Report ===


def report(results):
    table5 = results["table5"]
    print("\nHeld-out documents, Table 5 at small scale: accuracy of the sentence")
    print("head on each evaluation set, MLM on the SOP set (majority class: the")
    print("larger label share, and the unigram baseline for MLM), and the balanced")
    print("accuracy (mean recall of the two classes; 0.5 for any constant guess):")
    print(
        f"{'trained on':<22}{'MLM':>8}{'NSP eval':>10}{'SOP eval':>10}"
        f"{'NSP bal.':>10}{'SOP bal.':>10}"
    )
    for name, row in table5.items():
        print(
            f"{name:<22}{row['mlm']:>8.3f}{row['nsp']:>10.3f}{row['sop']:>10.3f}"
            f"{row['nsp_balanced']:>10.3f}{row['sop_balanced']:>10.3f}"
        )
    paper = PAPER_TABLE5
    print(
        f"{'paper NSP (base)':<22}{0.545:>8.3f}{paper['nsp']['nsp']:>10.3f}"
        f"{paper['nsp']['sop']:>10.3f}"
    )
    print(
        f"{'paper SOP (base)':<22}{0.540:>8.3f}{paper['sop']['nsp']:>10.3f}"
        f"{paper['sop']['sop']:>10.3f}"
    )
    for line in results["summary"]:
        print(line)


def main(argv=None):
    # Before albert_keras (imported by parse_args) sets its default, 2.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    args = parse_args(argv)
    if args.backend:
        if "keras" in sys.modules:
            raise SystemExit("--backend must be set before Keras is imported.")
        os.environ["KERAS_BACKEND"] = args.backend
    if args.features:
        info, arrays = load_features(args.features)
        args.seq_length = arrays["sop"]["eval"]["input_ids"].shape[1]
        args.predictions = arrays["sop"]["eval"]["masked_lm_ids"].shape[1]
    else:
        info = prepare(args)
        if args.prepare_only:
            write_features(args, info)
            return
        arrays = {
            task: {
                "eval": records_to_arrays(
                    info[task]["eval_records"],
                    args.seq_length,
                    args.predictions,
                    args.eval_instances,
                )
            }
            for task in TASKS
        }
    # The size of the vocabulary the data was made with (features.npz of
    # earlier versions, without the entry, used the embedded 8000 pieces).
    args.pieces = info.get("vocab_size", 8000)
    import keras
    import numpy as np

    from albert_keras import AlbertBackbone, AlbertPretrainer

    backend = keras.backend.backend()
    device = _device_name(backend)
    results = {
        "config": "albert_small (H=256, L=4, E=128, I=1024, 4 heads), "
        f"vocab {args.pieces}",
        "backend": backend,
        "device": device,
        "settings": {
            k: getattr(args, k)
            for k in (
                "steps",
                "minutes",
                "batch",
                "seq_length",
                "predictions",
                "learning_rate",
                "warmup_fraction",
                "dropout",
                "weight_decay",
                "optimizer",
                "dupe_factor",
                "vocab_size",
                "held_out_every",
                "split_sentences",
                "mix_sentences",
                "max_documents",
                "train_fraction",
                "sharing",
                "eval_instances",
                "eval_dupe_factor",
                "seed",
                "init_model",
            )
        },
        "data": info,
        "training": {},
        "table5": {},
    }
    keras.utils.set_random_seed(args.seed)
    untrained = AlbertPretrainer(AlbertBackbone(model_config(args)))
    untrained.compile(jit_compile=not args.no_jit)
    rows = {"untrained": untrained}
    # Label shares differ from 0.5 (NSP pairs a lone segment with another
    # document, label 1): the majority class is the chance level to beat.
    majority = {}
    for task in TASKS:
        share = float(np.mean(arrays[task]["eval"]["next_sentence_labels"]))
        majority[task] = max(share, 1 - share)
    results["table5"]["majority class"] = {
        "mlm": info["sop"]["unigram_accuracy"],
        "nsp": majority["nsp"],
        "sop": majority["sop"],
        "nsp_balanced": 0.5,
        "sop_balanced": 0.5,
    }
    for task in args.tasks:
        print(
            f"\nPretraining on {task.upper()} data ({backend}, {device}):", flush=True
        )
        if args.features:
            model, timer, seconds = train_on_arrays(args, arrays[task]["train"], task)
        else:
            model, timer, seconds = train_on_records(args, info, task)
        results["training"][task] = {
            "steps": len(timer.times),
            "sequences": len(timer.times) * args.batch,
            "seconds": seconds,
            "seq_per_s": timer.seq_per_s(args.batch),
            "tokens_per_s": timer.seq_per_s(args.batch) * args.seq_length,
        }
        rows[task] = model
    for name, path in args.pretrained:
        rows[name] = keras.saving.load_model(path)
    for name, model in rows.items():
        on = {t: evaluate(model, arrays[t]["eval"], args.eval_batch) for t in TASKS}
        key = (
            name
            if name in ("untrained", *dict(args.pretrained))
            else (f"{name.upper()} ({name})")
        )
        results["table5"][key] = {
            "mlm": on["sop"]["mlm_accuracy"],
            "nsp": on["nsp"]["sop_accuracy"],
            "sop": on["sop"]["sop_accuracy"],
            "nsp_balanced": on["nsp"]["balanced_accuracy"],
            "sop_balanced": on["sop"]["balanced_accuracy"],
        }
    if args.reference_steps and backend == "tensorflow":
        results["keras_hub_reference"] = keras_hub_reference(args)
    results["summary"] = summarize(results, info)
    report(results)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
        print(f"Wrote {args.out}")


def keras_hub_reference(args):
    """Training throughput against keras-hub, measured in this run.

    `bench_pretraining_step.compare` at this run's batch, length, masked
    positions and model config: our `AlbertPretrainer` (MLM + SOP) and
    keras-hub's `AlbertMaskedLM` (MLM only; keras-hub has no SOP head and no
    n-gram data) fit the same synthetic batches, alternating rounds.
    """
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_pretraining_step import compare, print_comparison

    print(
        f"\nSame-run reference: {args.reference_steps} steps x 3 rounds of "
        f"{args.batch} x {args.seq_length}, {args.predictions} masked positions, "
        "both with XLA:",
        flush=True,
    )
    result = compare(
        args.batch,
        args.seq_length,
        args.predictions,
        args.reference_steps,
        repeats=3,
        config=model_config(args).to_dict(),
        seed=args.seed,
    )
    print_comparison(result)
    return result


def summarize(results, info):
    table, training = results["table5"], results["training"]
    lines = []
    unigram = info["sop"]["unigram_accuracy"]
    sop_key = next((k for k in table if k.startswith("SOP")), None)
    nsp_key = next((k for k in table if k.startswith("NSP")), None)
    if sop_key:
        row = table[sop_key]
        sop_ok = "met" if row["sop"] > 0.75 else "NOT met"
        lines.append(
            f"SOP-trained, held-out SOP accuracy {row['sop']:.3f} (target > 0.75: "
            f"{sop_ok}); MLM accuracy {row['mlm']:.3f} vs unigram baseline "
            f"{unigram:.3f} ({row['mlm'] / unigram:.2f}x)"
        )
    if "sop" in training:
        run = training["sop"]
        lines.append(
            f"training: {run['steps']} steps x {results['settings']['batch']} x "
            f"{results['settings']['seq_length']} in {run['seconds']:.0f} s, "
            f"{run['seq_per_s']:.1f} seq/s ({results['device']})"
        )
    reference = results.get("keras_hub_reference")
    if reference:
        lines.append(
            f"training step vs keras-hub AlbertMaskedLM (MLM only) at these sizes, "
            f"same run: {reference['ours_seq_per_s']:.1f} vs "
            f"{reference['keras_hub_seq_per_s']:.1f} seq/s = "
            f"{reference['ratio']:.2f}x ({reference['cpu_ratio']:.2f}x per CPU-second)"
        )
    if sop_key and nsp_key:
        sop, nsp = table[sop_key], table[nsp_key]
        chance = table["majority class"]
        lines.append(
            f"Table 5 ratios: on SOP, SOP-trained / NSP-trained "
            f"{sop['sop'] / nsp['sop']:.2f}x; on NSP, SOP-trained / NSP-trained "
            f"{sop['nsp'] / nsp['nsp']:.2f}x; over the majority class, NSP-trained "
            f"on SOP {nsp['sop'] - chance['sop']:+.3f}, SOP-trained on SOP "
            f"{sop['sop'] - chance['sop']:+.3f} and on NSP "
            f"{sop['nsp'] - chance['nsp']:+.3f}"
        )
        lines.append(
            f"balanced accuracy (chance 0.5): NSP-trained on SOP "
            f"{nsp['sop_balanced']:.3f}, on NSP {nsp['nsp_balanced']:.3f}; "
            f"SOP-trained on SOP {sop['sop_balanced']:.3f}, on NSP "
            f"{sop['nsp_balanced']:.3f}"
        )
    return lines


def _device_name(backend):
    if backend == "jax":
        import jax

        return str(jax.devices()[0].device_kind)
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            return tf.config.experimental.get_device_details(gpus[0]).get(
                "device_name", "GPU"
            )
    return f"CPU ({os.cpu_count()} cores)"


if __name__ == "__main__":
    main()
