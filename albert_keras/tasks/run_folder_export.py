"""The text-in SavedModel of a fine-tuning run, on any Keras backend."""

from __future__ import annotations

import os

import keras

from albert_keras.atomic_files import read_json


def export_savedmodel(task, output_dir):
    """Writes `output_dir/savedmodel`: `task.model` with its tokenizer on
    strings. TensorFlow builds it, in a TensorFlow process on another
    backend (Keras's JAX and torch exports cannot hold the tokenizer's
    string ops), from the run folder's files.

    Args:
        task: the fitted `Task` (`model`, `tokenizer` and `result` set).
        output_dir: the run's folder, its files written.
    """
    from albert_keras.quiet_start import run_in_tensorflow_process

    if keras.backend.backend() == "tensorflow":
        task.export(os.path.join(output_dir, "savedmodel"))
        return
    code = (
        "import sys; from albert_keras.tasks.run_folder_export import "
        "export_run_folder; export_run_folder(sys.argv[1])"
    )
    run_in_tensorflow_process(code, [output_dir])


def export_run_folder(output_dir, path=None):
    """Writes `output_dir/savedmodel` of a finished `run_finetuning` folder
    (best.keras, metrics.json, settings.json, the vocabulary), on the
    TensorFlow backend: the same SavedModel the run writes there itself.

    Args:
        output_dir: the run's folder.
        path: where the SavedModel goes; default `output_dir/savedmodel`.
    """
    from albert_keras.tasks.task import Task
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer

    settings = read_json(os.path.join(output_dir, "settings.json"))
    task = Task.from_config(settings["task"])
    task.tokenizer = load_tokenizer(os.path.join(output_dir, settings["vocab"]))
    task.model = keras.saving.load_model(os.path.join(output_dir, "best.keras"))
    task.result = read_json(os.path.join(output_dir, "metrics.json"))
    task.export(path or os.path.join(output_dir, "savedmodel"))
