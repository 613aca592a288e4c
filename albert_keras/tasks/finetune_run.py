"""`run_finetuning`: one task, from files and an initial model to dev metrics.

What `albert-keras finetune` runs, usable from Python too:

>>> metrics = run_finetuning(  # doctest: +SKIP
...     "classify", "tasks/rt_sentiment/train.jsonl", "tasks/rt_sentiment/dev.jsonl",
...     init="runs/pretrain/pretrainer.keras", output_dir="runs/rt")
"""

from __future__ import annotations

import glob
import json
import math
import os
import shutil
import time
import warnings

import keras
import numpy as np

from albert_keras.tasks.dev_evaluation import (
    DevEvaluation,
    classification_scores,
    regression_scores,
    task_scores,
)
from albert_keras.tasks.span_predictions import check_null_score
from albert_keras.tasks.squad_evaluation import squad_evaluate
from albert_keras.tasks.task_reader import TASKS, read_squad_file, read_task_file
from albert_keras.tokenizers.vocabulary_files import check_vocabulary_size

# The dev metric each task selects its best epoch by.
MONITOR = {
    "classify": "accuracy",
    "pair": "accuracy",
    "regress": "pearson",
    "choice": "accuracy",
    "squad": "best_f1",
}
# Vocabulary files looked for beside an `--init` model.
_VOCAB_NAMES = (
    "vocab.model",
    "30k-clean.model",
    "spiece.model",  # transformers folders
    "vocab.txt",
    "vocab_chinese.txt",
)


def find_vocabulary(init, vocab):
    """The vocabulary to tokenize with: `vocab`, or one beside `init`."""
    if vocab:
        return vocab
    from albert_keras.presets import ALIASES, PRESETS

    if init in PRESETS or init in ALIASES:
        from albert_keras.sample_text import SPM_MODEL_PATH

        return SPM_MODEL_PATH
    folder = init if os.path.isdir(init) else os.path.dirname(init) or "."
    for name in _VOCAB_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    found = sorted(glob.glob(os.path.join(folder, "*.model")))
    if found:
        return found[0]
    raise FileNotFoundError(
        f"No vocabulary found beside {init!r} (looked for {', '.join(_VOCAB_NAMES)} "
        "and *.model): pass --vocab with the SentencePiece model or vocab.txt the "
        "model was pretrained with."
    )


def load_backbone(init, vocabulary_size, max_position=None):
    """The backbone to fine-tune: preset name, `.keras` file or official checkpoint.

    Args:
        init: a preset name (random initialization, vocabulary size taken
            from the tokenizer), a `.keras` file holding an `AlbertBackbone`
            or any task model (e.g. `pretrainer.keras` of `albert-keras
            pretrain`) or such a model already loaded, an official checkpoint
            (folder or prefix) or a transformers ALBERT folder (`config.json`
            + `model.safetensors`).
        vocabulary_size: the tokenizer's; checked against the model's.
        max_position: at least this many positions (a loaded model with
            fewer gets its table extended, see `with_positions`).
    """
    from albert_keras.config import AlbertConfig
    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.presets import ALIASES, PRESETS

    if isinstance(init, keras.Model):
        backbone = init if isinstance(init, AlbertBackbone) else init.backbone
    elif init in PRESETS or init in ALIASES:
        config = AlbertConfig.from_preset(init).replace(vocab_size=vocabulary_size)
        if max_position and config.max_position_embeddings < max_position:
            config = config.replace(max_position_embeddings=max_position)
        return AlbertBackbone(config)
    elif init.endswith(".keras"):
        if not os.path.isfile(init):
            raise FileNotFoundError(f"--init {init!r} does not exist.")
        model = keras.saving.load_model(init, compile=False)
        backbone = model if isinstance(model, AlbertBackbone) else model.backbone
    elif os.path.exists(init) or glob.glob(init + "*.index"):
        from checkpoints_convert import load_official_checkpoint

        backbone = load_official_checkpoint(init, model="backbone")
    else:
        raise FileNotFoundError(
            f"--init {init!r} is neither a preset ({', '.join(sorted(PRESETS))}), a "
            ".keras file, an official checkpoint folder or prefix, nor a "
            "transformers ALBERT folder."
        )
    check_vocabulary_size(
        backbone.config.vocab_size,
        vocabulary_size,
        "pass the --vocab the model was pretrained with.",
    )
    return with_positions(backbone, max_position or 0)


def reuse_task_head(model, loaded):
    """Starts `model` from the whole loaded task model when it is the same.

    A model of the same class with weights of the same shapes (a longer
    position table allowed, see `with_positions`; e.g. a SQuAD
    model warmed up on other questions, fine-tuned again on the task's own)
    gives its head too; anything else (a pretrainer, a classifier
    with other labels) gives only its backbone, which `load_backbone` took.

    Returns: a phrase saying which.
    """
    from albert_keras.models.weight_copy import copy_weights

    if type(loaded) is type(model):
        try:
            copy_weights(loaded, model)
            return f"the whole {type(model).__name__} reused, head included"
        except ValueError:  # another head (e.g. other labels): nothing assigned
            pass
    return f"backbone reused, new {type(model).__name__} head"


def with_positions(backbone, sequence_length):
    """`backbone`, or a copy with `sequence_length` positions when it has fewer.

    A model pretrained on short sequences (`albert-keras pretrain` keeps 128
    positions at 128 tokens or less) fine-tunes on longer ones: its position
    table is tiled into the longer one (`copy_weights`), and the run says so.
    """
    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.models.weight_copy import copy_weights

    have = backbone.config.max_position_embeddings
    if sequence_length <= have:
        return backbone
    longer = AlbertBackbone(
        backbone.config.replace(max_position_embeddings=sequence_length),
        dtype=backbone.dtype_policy.name,
    )
    copy_weights(backbone, longer)
    print(
        f"The model has {have} positions: sequence_length={sequence_length} "
        f"extends its table, positions {have}-{sequence_length - 1} starting as "
        "copies of the first ones (fine-tuning trains them).",
        flush=True,
    )
    return longer


def _optimizer(learning_rate, total_steps, warmup_fraction, name="adamw"):
    from albert_keras.training.optimizers import create_optimizer

    return create_optimizer(
        name,
        learning_rate,
        num_train_steps=max(total_steps, 1),
        num_warmup_steps=int(warmup_fraction * total_steps),
    )


def _subset(examples, count, seed):
    """`count` examples drawn at random (seeded), in file order: task files
    are often sorted by label, so the first N would be one class."""
    if count is None or count >= len(examples):
        return examples
    rng = np.random.default_rng(seed)
    return [examples[i] for i in sorted(rng.choice(len(examples), count, False))]


class _Task:
    """Data, model and scoring of one task type."""

    def __init__(self, task, args, tokenizer):
        self.task, self.args, self.tokenizer = task, args, tokenizer
        self.reports = {}

    def read(self):
        from albert_keras.tasks import task_datasets

        a = self.args
        length, batch = a["sequence_length"], a["batch_size"]
        if self.task == "squad":
            return self._read_squad()
        train, self.labels, report = read_task_file(a["train"], self.task)
        train = _subset(train, a["max_train_examples"], a["seed"])
        dev, _, dev_report = read_task_file(a["dev"], self.task, **self._label_kwargs())
        dev = _subset(dev, a["max_dev_examples"], a["seed"])
        self.reports = {"train": report, "dev": dev_report}
        if self.task == "choice":
            make = task_datasets.choice_dataset
            kwargs = {}
        else:
            make = task_datasets.text_dataset
            kwargs = {"regression": self.task == "regress"}
        self.train_data = make(
            train,
            self.tokenizer,
            length,
            batch,
            training=True,
            seed=a["seed"],
            report=report,
            **kwargs,
        )
        self.dev_data = make(
            dev, self.tokenizer, length, batch, report=dev_report, **kwargs
        )
        self.dev_labels = np.asarray([e["label"] for e in dev])
        self.train_labels = np.asarray([e["label"] for e in train])
        self.num_train = len(train)

    def _label_kwargs(self):
        if self.task == "choice":
            return {"num_choices": self.labels}
        if self.task == "regress":
            return {}
        return {"label_names": self.labels}

    def _read_squad(self):
        from albert_keras.tasks.squad_features import (
            keep_null_windows,
            squad_dataset,
            squad_features,
        )

        a = self.args
        options = dict(
            sequence_length=a["sequence_length"],
            doc_stride=a["doc_stride"],
            max_query_length=a["max_query_length"],
        )
        train, _, report = read_squad_file(a["train"], training=True)
        train = _subset(train, a["max_train_examples"], a["seed"])
        dev, self.dev_json, dev_report = read_squad_file(a["dev"], training=False)
        dev = _subset(dev, a["max_dev_examples"], a["seed"])
        self.reports = {"train": report, "dev": dev_report}
        features, _ = squad_features(train, self.tokenizer, report=report, **options)
        windows = len(features["token_ids"])
        features = keep_null_windows(features, a["null_window_fraction"], a["seed"])
        if len(features["token_ids"]) < windows:
            print(
                f"train: {len(features['token_ids'])} of {windows} windows kept "
                f"(null windows kept with probability {a['null_window_fraction']})",
                flush=True,
            )
        self.dev_features, self.dev_contexts = squad_features(
            dev, self.tokenizer, report=dev_report, **options
        )
        self.dev_examples = dev
        head = a["head"]
        self.train_data = squad_dataset(
            features, a["batch_size"], training=True, seed=a["seed"], head=head
        )
        self.dev_data = squad_dataset(self.dev_features, a["batch_size"], head=head)
        self.num_train = len(features["token_ids"])
        self.labels = None
        self.train_has_answer = 1 - features["is_impossible"]

    def build(self, backbone):
        from albert_keras.models import (
            AlbertClassifier,
            AlbertMultipleChoice,
            AlbertSpanQA,
        )

        ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        if self.task in ("classify", "pair"):
            model = AlbertClassifier(backbone, num_classes=len(self.labels))
            return model, {"logits": ce}, None
        if self.task == "regress":
            model = AlbertClassifier(backbone, num_classes=1)
            return model, {"logits": keras.losses.MeanSquaredError()}, None
        if self.task == "choice":
            model = AlbertMultipleChoice(backbone, num_choices=self.labels)
            return model, {"logits": ce}, None
        if self.args["head"] == "simple":
            model = AlbertSpanQA(backbone)
            losses = {"start_logits": ce, "end_logits": ce}
            return model, losses, {"start_logits": 0.5, "end_logits": 0.5}
        from albert_keras.models.albert_squad_v2 import AlbertSquadV2

        model = AlbertSquadV2(
            backbone,
            start_n_top=self.args["start_n_top"],
            end_n_top=self.args["end_n_top"],
        )
        losses, weights = AlbertSquadV2.official_losses()
        return model, losses, weights

    def score(self, model) -> dict:
        outputs = model.predict(self.dev_data, verbose=0)
        if self.task == "squad":
            return self._squad_scores(outputs)
        return task_scores(self.task, self.dev_labels, outputs["logits"])

    def _squad_scores(self, outputs):
        from albert_keras.tasks.span_predictions import answers_by_id

        predictions, odds = answers_by_id(
            self.dev_examples,
            self.dev_features,
            self.dev_contexts,
            outputs,
            head=self.args["head"],
            max_answer_length=self.args["max_answer_length"],
            null_score=self.args["null_score"],
        )
        self.last_predictions = (predictions, odds)
        result = squad_evaluate(self.dev_json, predictions, odds, 0.0)
        keep = ("exact", "f1", "best_exact", "best_f1", "best_f1_thresh")
        scores = {k: result[k] for k in keep if k in result}
        for k in ("HasAns_f1", "NoAns_f1"):
            if k in result:
                scores[k] = result[k]
        return scores

    def baselines(self) -> dict:
        """Scores of trivial predictors on dev (what the model must beat)."""
        if self.task == "squad":
            predictions = {e["id"]: "" for e in self.dev_examples}
            result = squad_evaluate(self.dev_json, predictions)
            return {"always_no_answer": {"exact": result["exact"], "f1": result["f1"]}}
        if self.task == "regress":
            constant = np.full(len(self.dev_labels), self.train_labels.mean())
            return {"train_mean": regression_scores(self.dev_labels, constant)}
        # `labels` is the option count for "choice", the label set otherwise.
        n = int(self.labels) if self.task == "choice" else len(self.labels)
        majority = np.bincount(self.train_labels, minlength=n).argmax()
        logits = np.eye(n)[np.full(len(self.dev_labels), majority)]
        return {"majority_class": classification_scores(self.dev_labels, logits, n)}


def run_finetuning(
    task,
    train,
    dev,
    init="albert_small",
    output_dir="runs/finetune",
    vocab=None,
    epochs=3,
    batch_size=32,
    learning_rate=5e-5,
    warmup_fraction=0.1,
    optimizer="adamw",
    sequence_length=128,
    patience=2,
    seed=0,
    max_train_examples=None,
    max_dev_examples=None,
    head="v2",
    doc_stride=64,
    max_query_length=32,
    max_answer_length=30,
    null_window_fraction=1.0,
    null_score="official",
    start_n_top=5,
    end_n_top=5,
    mixed_precision=False,
    jit_compile=True,
    export=True,
    verbose=1,
):
    """Fine-tunes one task with AdamW, keeps the best dev epoch, writes a report.

    Args:
        task: "classify", "pair", "regress", "choice" or "squad".
        train, dev: task files (JSON Lines, or SQuAD JSON for "squad").
        init: preset name (random init), `.keras` file (e.g. the
            `pretrainer.keras` of `albert-keras pretrain`) or an official
            checkpoint folder/prefix.
        output_dir: where `best.keras`, `metrics.json`, `curves.png`,
            `history.csv`, `logs/` (TensorBoard) and `backup/` go.
        vocab: SentencePiece model or WordPiece vocab.txt; default: the one
            beside `init` (or the embedded one for a preset).
        epochs, batch_size, learning_rate, warmup_fraction: AdamW with linear
            warmup and linear decay, weight decay 0.01 (not on LayerNorm and
            biases), global-norm clipping 1.0.
        optimizer: "adamw" (`keras.optimizers.AdamW`) or "adamw_official"
            (`OfficialAdamW`: the official optimizer, no bias correction).
        sequence_length: packed length (for SQuAD the window length).
        patience: epochs without a better dev metric before stopping.
        seed: shuffling and initialization seed.
        max_train_examples, max_dev_examples: use only the first N.
        head, doc_stride, max_query_length, max_answer_length, start_n_top,
            end_n_top: SQuAD options ("v2": the official answer-class head;
            "simple": start/end logits).
        null_window_fraction: SQuAD: the share of training windows without
            an answer to keep (`keep_null_windows`); 1.0 keeps all.
        null_score: SQuAD: the no-answer score whose dev threshold is chosen
            ("official", or "span_adjusted": the answer-class logit minus the
            best span's log probability, see `span_predictions`).
        mixed_precision: mixed_bfloat16.
        jit_compile: XLA.
        export: also write `savedmodel/`: the best model with its tokenizer,
            on `tf.string`: `serve(texts)` and `serve_pairs(text_a, text_b)`
            (classify, pair, regress), `serve(context, options)` (choice),
            `serve(question, context)` -> answers (squad; the no-answer
            threshold is the best epoch's `best_f1_thresh`).
        verbose: Keras progress bar (1) or not (0).

    Returns:
        The dict written to `metrics.json`: `best` (dev metrics of the best
        epoch), `epochs` (per epoch), `baselines`, `data` (reports), timing,
        and `settings` (length, vocabulary, SQuAD options), which `albert-keras
        predict` reads to prepare new inputs as training did. SQuAD runs also
        write `dev_predictions.json` and `dev_null_odds.json` (the official
        evaluation script's prediction and `--na-prob-file` formats).
    """
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from albert_keras.training.loss_curve_plot import LossCurvePlot

    if task not in TASKS:
        raise ValueError(f"Unknown task {task!r}. Allowed: {', '.join(TASKS)}")
    check_null_score(null_score)
    keras.utils.set_random_seed(seed)
    os.makedirs(output_dir, exist_ok=True)
    vocab = find_vocabulary(init, vocab)
    tokenizer = load_tokenizer(vocab)
    args = dict(locals())
    job = _Task(task, args, tokenizer)
    started = time.perf_counter()
    job.read()
    for name, report in job.reports.items():
        print(f"{name}: {report.summary()}", flush=True)
    if mixed_precision:
        keras.mixed_precision.set_dtype_policy("mixed_bfloat16")
    try:
        # A .keras is loaded once: its backbone here, its head below.
        source = init
        if init.endswith(".keras") and os.path.isfile(init):
            import albert_keras.models  # noqa: F401  (registers every task model)

            source = keras.saving.load_model(init, compile=False)
        backbone = load_backbone(source, tokenizer.vocabulary_size(), sequence_length)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    model, losses, loss_weights = job.build(backbone)
    if isinstance(source, keras.Model):
        print(f"--init {init}: {reuse_task_head(model, source)}", flush=True)
    # Span heads read the sequence output only, as the official ones.
    warnings.filterwarnings("ignore", "Gradients do not exist for variables.*pooler")
    steps = -(-job.num_train // batch_size) * epochs
    model.compile(
        optimizer=_optimizer(learning_rate, steps, warmup_fraction, optimizer),
        loss=losses,
        loss_weights=loss_weights,
        jit_compile=jit_compile,
    )
    monitor = "val_" + MONITOR[task]
    best_path = os.path.join(output_dir, "best.keras")
    history_path = os.path.join(output_dir, "history.csv")
    backup_dir = os.path.join(output_dir, "backup")
    # A killed run resumes from its last finished epoch (BackupAndRestore);
    # the history of the epochs before the kill is kept, and only a better
    # epoch replaces best.keras.
    resuming = os.path.isdir(backup_dir) and os.path.isfile(history_path)
    earlier = _read_history(history_path) if resuming else {}
    previous_best = max(earlier.get(monitor, []), default=None)
    evaluation = DevEvaluation(job.score, verbose=bool(verbose))
    callbacks = [
        evaluation,
        keras.callbacks.BackupAndRestore(backup_dir),
        keras.callbacks.ModelCheckpoint(
            best_path,
            monitor=monitor,
            mode="max",
            save_best_only=True,
            initial_value_threshold=previous_best,
        ),
        keras.callbacks.EarlyStopping(
            monitor=monitor, mode="max", patience=patience, restore_best_weights=True
        ),
        keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")),
        keras.callbacks.CSVLogger(history_path, append=resuming),
        LossCurvePlot(
            os.path.join(output_dir, "curves.png"),
            title=f"fine-tuning: {task}",
            scores=(MONITOR[task],),
        ),
    ]
    train_started = time.perf_counter()
    model.fit(
        job.train_data,
        validation_data=job.dev_data,
        epochs=epochs,
        callbacks=callbacks,
        verbose=verbose,
        shuffle=False,  # the pipeline shuffles
    )
    train_seconds = time.perf_counter() - train_started
    history = _read_history(history_path)
    epochs_run = len(history.get(monitor, []))
    best_epoch = int(np.argmax(history[monitor])) if epochs_run else None
    best = {}
    if best_epoch is not None:
        best = {k[4:]: v[best_epoch] for k, v in history.items() if k[:4] == "val_"}
    result = {
        "task": task,
        "init": init,
        "vocab": vocab,
        "monitor": MONITOR[task],
        "best_epoch": None if best_epoch is None else best_epoch + 1,
        "best": best,
        "epochs": history,
        "baselines": job.baselines(),
        "labels": job.labels if task in ("classify", "pair") else None,
        # What `albert-keras predict` needs to prepare inputs as training did.
        "settings": {
            "sequence_length": sequence_length,
            "batch_size": batch_size,
            "vocab": os.path.basename(vocab),
            **(
                {
                    "head": head,
                    "doc_stride": doc_stride,
                    "max_query_length": max_query_length,
                    "max_answer_length": max_answer_length,
                    "null_score": null_score,
                }
                if task == "squad"
                else {}
            ),
        },
        "data": {name: report.to_dict() for name, report in job.reports.items()},
        "train_examples": job.num_train,
        "train_seconds": train_seconds,
        "train_examples_per_second": job.num_train
        * (epochs_run - len(earlier.get(monitor, [])))
        / train_seconds,
        "resumed_after_epoch": len(earlier.get(monitor, [])) if resuming else None,
        "total_seconds": time.perf_counter() - started,
    }
    if task == "squad" and epochs_run:
        job.score(model)  # the best epoch's weights are back: its predictions
        with open(os.path.join(output_dir, "dev_predictions.json"), "w") as f:
            json.dump(job.last_predictions[0], f, indent=1)
        with open(os.path.join(output_dir, "dev_null_odds.json"), "w") as f:
            json.dump(job.last_predictions[1], f, indent=1)
    with open(os.path.join(output_dir, "metrics.json"), "w") as f:
        json.dump(result, f, indent=2, default=_plain)
    shutil.copy(vocab, os.path.join(output_dir, os.path.basename(vocab)))
    if export and epochs_run:
        from albert_keras.models.albert_text_model import with_tokenizer

        options = {}
        if task == "squad":  # windows as in training; dev's no-answer threshold
            options = dict(
                doc_stride=doc_stride,
                max_query_length=max_query_length,
                max_answer_length=max_answer_length,
                null_score=null_score,
                null_threshold=result["best"].get("best_f1_thresh", math.inf),
            )
        text_model = with_tokenizer(model, tokenizer, sequence_length, **options)
        text_model.export(os.path.join(output_dir, "savedmodel"), verbose=False)
    return result


def _read_history(path):
    """The CSVLogger file as {column: [floats]} (epochs of every run)."""
    import csv

    if not os.path.isfile(path):
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    columns = {}
    for row in rows:
        for key, value in row.items():
            if key != "epoch" and value not in (None, ""):
                columns.setdefault(key, []).append(float(value))
    return columns


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
