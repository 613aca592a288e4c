"""`Task`: what every fine-tuning task class shares."""

from __future__ import annotations

import dataclasses
import typing

import keras
import numpy as np

from albert_keras.tasks.task_data import TaskData


class Task:
    """One fine-tuning task: read -> features -> model -> loss -> dev score -> export.

    A subclass (`ClassificationTask`, `MultipleChoiceTask`, `SquadTask`) sets
    `config_class`, a dataclass of the task's own settings, and implements
    the hooks: `read`, `dataset`, `build_model`, `losses`, `scores`,
    `baselines`, `text_model` and `write_predictions`. `fit` runs
    `run_finetuning` over them; the config round-trips through JSON
    (`get_config` / `Task.from_config`), which is how `albert-keras predict`
    prepares new inputs exactly as training did.

    Args:
        config: an instance of `config_class`, or None to build one from
            `**fields`.
        **fields: fields of `config_class` (they replace the config's).

    Example:
    >>> from albert_keras.tasks import ClassificationTask
    >>> task = ClassificationTask(num_classes=2, text_fields=("text",))
    >>> Task.from_config(task.get_config()).config == task.config
    True
    """

    config_class: type = None
    # The dev metric the best epoch is chosen by (higher is better), and
    # the others a run may choose it by (--metric-for-best-model).
    monitor = "accuracy"
    metric_names = ("accuracy", "f1", "mcc")
    # Its `dataset` takes `group_by_length` (FinetuningOptions).
    groups_by_length = False
    # What its predictions files may be (`write_predictions`); tasks with
    # one prediction a row also write .csv / .tsv tables.
    prediction_formats = ".jsonl, .csv or .tsv"
    writes_tables = True
    # Why its dev set cannot be held out of the training examples
    # (`dev_fraction`); None: it can.
    no_held_out_dev = None

    def __init__(self, config=None, **fields):
        if config is None:
            config = self.config_class(**fields)
        elif fields:
            config = dataclasses.replace(config, **fields)
        self.config = config
        self.model = None  # the fitted model and its tokenizer, after `fit`
        self.tokenizer = None
        self.result = None

    # --- The hooks each task implements ---------------------------------
    def read(self, source, training=False, require_labels=True) -> TaskData:
        """The examples of a task file (or list of dicts) and its report."""
        raise NotImplementedError

    def dataset(self, data, tokenizer, batch_size, training=False, seed=0, epochs=None):
        """A `tf.data.Dataset` of (features, labels) batches of `data`.

        Training data comes shuffled, the `epochs` (a `range`, default one)
        back to back, epoch `e` in an order fixed by `seed` and `e` (see
        `task_datasets.epoch_batches`), so a resumed run sees the same data.
        Tasks of texts also take `group_by_length=True` (see
        `task_datasets.length_grouped`).
        """
        raise NotImplementedError

    def build_model(self, backbone) -> keras.Model:
        """The task network over `backbone`."""
        raise NotImplementedError

    def losses(self):
        """(losses, loss_weights) for `model.compile`, keyed by output name."""
        raise NotImplementedError

    def scores(self, model, data, dataset) -> dict:
        """The dev metrics of `model` on `data` (batched as `dataset`)."""
        logits = model.predict(dataset, verbose=0)["logits"]
        return self.metrics(data.labels(), np.asarray(logits))

    def metrics(self, labels, logits) -> dict:
        """The task's metrics of `logits` against `labels`."""
        raise NotImplementedError

    def baselines(self, train, dev) -> dict:
        """Scores of trivial predictors on dev: what the model must beat."""
        raise NotImplementedError

    def text_model(self, model, tokenizer, best=None) -> keras.Model:
        """`model` on raw strings (tokenizer inside), for export.

        Args:
            best: the best epoch's dev scores (SQuAD takes its no-answer
                threshold from them).
        """
        raise NotImplementedError

    def write_predictions(self, model, data, dataset, output, record) -> dict:
        """Predicts `data`, writes `output` (a JSON line per example, made by
        `prediction`), returns the metrics of the `scored` examples (None if
        none is)."""
        from albert_keras.tasks.prediction_table import write_prediction_lines

        logits = np.asarray(model.predict(dataset, verbose=0)["logits"], "float64")
        lines = [
            {"line": example["line"], **self.prediction(row)}
            for example, row in zip(data.examples, logits, strict=True)
        ]
        write_prediction_lines(output, lines)
        scored = self.scored(data)
        if not scored:
            return {"metrics": None}
        labels = np.asarray([data.examples[i]["label"] for i in scored])
        return {"metrics": self.metrics(labels, logits[scored])}

    def scored(self, data) -> list[int]:
        """The examples predictions are scored on: all, where all have a label."""
        if all(e["label"] is not None for e in data.examples):
            return list(range(len(data.examples)))
        return []

    def prediction(self, logits) -> dict:
        """What one example's prediction line says, from its logits."""
        raise NotImplementedError

    # --- Shared ------------------------------------------------------------
    @classmethod
    def config_fields(cls, fields: dict) -> dict:
        """The config fields of the CLI's field flags (`text_fields`,
        `label_field`, ...): the same names, but for a task that calls them
        otherwise."""
        return dict(fields)

    def packed_dataset(
        self, make, data, tokenizer, batch_size, training, seed, epochs=None, **kw
    ):  # kw: `make`'s own, e.g. group_by_length
        """`make` (a `task_datasets` pipeline) over `data`, unlabelled rows as 0."""
        rows = [dict(e, label=e["label"] or 0) for e in data.examples]
        length = self.config.sequence_length
        return make(
            rows,
            tokenizer,
            length,
            batch_size,
            training,
            seed,
            data.report,
            epochs=epochs,
            **kw,
        )

    def fit(
        self, init, train, dev=None, output_dir="runs/finetune", vocab=None, **options
    ):
        """Fine-tunes `init` on `train`, keeping the best `dev` epoch.

        Args:
            init: a backbone or task model, a preset name, a `.keras` file or
                an official / transformers checkpoint (see `load_backbone`).
            train, dev: task files, or lists of dicts; dev None with
                `dev_fraction=0.1`: a tenth of `train` held out as dev.
            output_dir: where the run's files go (see `run_finetuning`).
            vocab: the vocabulary; default: the one beside `init`.
            **options: `FinetuningOptions` fields (epochs, batch_size, ...).

        Returns:
            The run's `metrics.json` content; `self.model` is the best model.
        """
        from albert_keras.tasks.finetuning_run import run_finetuning

        self.output_dir = output_dir  # `export` on JAX or torch reads it
        self.result = run_finetuning(
            self, train, dev, init, output_dir, vocab, **options
        )
        return self.result

    def export(self, path):
        """Writes the fitted model with its tokenizer as a SavedModel on strings.

        On JAX and torch a TensorFlow process writes it, from the best.keras
        of the folder `fit` wrote (the text model's tokenizer is TensorFlow's).
        """
        if self.model is None:
            raise ValueError("Nothing to export yet: call `fit` first.")
        if keras.backend.backend() != "tensorflow":
            return self._export_in_tensorflow(path)
        from albert_keras.atomic_files import save_atomically

        best = (self.result or {}).get("best")
        model = self.text_model(self.model, self.tokenizer, best)

        def write(folder):
            model.export(folder, verbose=False)
            self.write_serving_extras(folder)

        # A new folder replaces the old one whole, or not at all.
        save_atomically(path, write)

    def _export_in_tensorflow(self, path):
        """`export` on JAX or torch: a TensorFlow process (whose ops the text
        model's tokenizer is) exports the folder `fit` wrote to `path`."""
        import os

        from albert_keras.quiet_start import run_in_tensorflow_process

        folder = getattr(self, "output_dir", None)
        if folder is None or not os.path.exists(os.path.join(folder, "settings.json")):
            raise ValueError(
                f"On the {keras.backend.backend()} backend `export` runs in a "
                "TensorFlow process from the folder `fit` wrote, and this task "
                "has none (its model was set, not fitted). Save the model "
                "(model.save) and export it with KERAS_BACKEND=tensorflow."
            )
        code = (
            "import sys; from albert_keras.tasks.run_folder_export import "
            "export_run_folder; export_run_folder(*sys.argv[1:])"
        )
        run_in_tensorflow_process(code, [str(folder), os.path.abspath(path)])

    def write_serving_extras(self, folder):
        """Files for the SavedModel's users that are not the graph's (in
        `folder/assets.extra`, which TF Serving ignores); none by default."""

    def get_config(self) -> dict:
        """`{"class": ..., "config": {...}}`, plain JSON."""
        return {"class": type(self).__name__, "config": dataclasses.asdict(self.config)}

    @staticmethod
    def from_config(config: dict) -> Task:
        """The task a `get_config` dict describes."""
        from albert_keras.tasks.task_names import TASK_CLASSES

        name = config.get("class")
        if name not in TASK_CLASSES:
            raise ValueError(
                f"Unknown task class {name!r}. Allowed: {', '.join(TASK_CLASSES)}"
            )
        cls = TASK_CLASSES[name]
        return cls(config_from_dict(cls.config_class, config.get("config", {})))


def config_from_dict(config_class, values: dict):
    """A config dataclass from JSON: lists back to tuples, unknown keys refused."""
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(
            f"Unknown {config_class.__name__} field(s) {unknown}. "
            f"Allowed: {', '.join(fields)}"
        )
    hints = typing.get_type_hints(config_class)
    converted = {}
    for key, value in values.items():
        if isinstance(value, list) and "tuple" in str(hints.get(key)):
            value = tuple(value)
        converted[key] = value
    return config_class(**converted)


def majority_baseline(train, dev, num_classes) -> dict:
    """The dev scores of always answering the training set's most common class."""
    from albert_keras.tasks.dev_evaluation import classification_scores

    labels = dev.labels()
    majority = np.bincount(train.labels().astype(int), minlength=num_classes).argmax()
    logits = np.eye(num_classes)[np.full(len(labels), majority)]
    return {"majority_class": classification_scores(labels, logits, num_classes)}


def write_labels_json(folder, labels) -> None:
    """`folder/assets.extra/labels.json`: the label of each logit, in order
    (beside a SavedModel; TF Serving ignores `assets.extra`)."""
    import os

    from albert_keras.atomic_files import write_json

    os.makedirs(os.path.join(folder, "assets.extra"), exist_ok=True)
    path = os.path.join(folder, "assets.extra", "labels.json")
    write_json(path, labels, ensure_ascii=False)


def softmax(logits) -> np.ndarray:
    """Row-wise softmax in float64."""
    logits = np.asarray(logits, "float64")
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(logits) -> np.ndarray:
    """Element-wise sigmoid in float64, without overflow warnings."""
    logits = np.asarray(logits, "float64")
    e = np.exp(-np.abs(logits))
    return np.where(logits >= 0, 1 / (1 + e), e / (1 + e))
