"""The files a fine-tuning run leaves when it ends (`write_run_outputs`)."""

from __future__ import annotations

import os

import numpy as np

from albert_keras.atomic_files import copy_file, write_json
from albert_keras.tasks.run_folder_export import export_savedmodel


def write_run_outputs(task, model, splits, result, vocab, output_dir, options):
    """metrics.json, settings.json, the vocabulary, dev outputs and savedmodel/.

    Args:
        task: the fitted `Task`; its `result` is set here.
        model: the task model, holding the best evaluation's weights (the
            export is the best model).
        splits: {"train", "dev"}: the run's `TaskData`, batched.
        result: what `metrics.json` gets.
        vocab: the vocabulary file, copied into the folder.
        output_dir: the run's folder.
        options: the run's `FinetuningOptions`.
    """
    dev = splits["dev"]
    if result["epochs_run"] and hasattr(task, "write_dev_outputs"):
        task.write_dev_outputs(model, dev, dev.batches, output_dir)
    write_json(os.path.join(output_dir, "metrics.json"), result, default=_plain)
    # What `albert-keras predict` needs to prepare inputs as training did.
    kept = _kept_vocabulary_name(vocab)
    settings = {"task": result["task"], "vocab": kept, "batch_size": options.batch_size}
    write_json(os.path.join(output_dir, "settings.json"), settings, default=_plain)
    copy_file(vocab, os.path.join(output_dir, kept))
    task.result = result
    if options.export and result["epochs_run"]:
        export_savedmodel(task, output_dir)


def _kept_vocabulary_name(vocab) -> str:
    """The name of the run's vocabulary copy: its own where a lookup beside
    best.keras finds it (vocab.txt, *.model, ...), else best.vocab.txt or
    best.model, as albert-convert keeps one beside a .keras file.

    >>> _kept_vocabulary_name("data/zh_vocab.txt"), _kept_vocabulary_name("a/vocab.txt")
    ('best.vocab.txt', 'vocab.txt')
    """
    from albert_keras.tokenizers.vocabulary_files import (
        VOCABULARY_NAMES,
        vocabulary_path_beside,
    )

    name = os.path.basename(vocab)
    if name in VOCABULARY_NAMES or name.endswith(".model"):
        return name
    return vocabulary_path_beside("best.keras", vocab)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
