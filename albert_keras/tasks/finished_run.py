"""A fine-tuning run folder's life: cleared, marked finished, taken up again.

`run_finetuning` marks a run finished (`mark_finished`) after its last file;
started again with the same settings, it does nothing but load the finished
run into the task (`finished_run`), so `task.export` and `task.model` work as
after the first call; `clear_run` is `--overwrite`.
"""

from __future__ import annotations

import os
import shutil

from albert_keras.atomic_files import read_json, write_json
from albert_keras.training.run_settings import RUN_STATE, SETTINGS_FILE

# The files of a run: what --overwrite removes.
RUN_FILES = (
    RUN_STATE,
    SETTINGS_FILE,
    "best.keras",
    "metrics.json",
    "settings.json",
    "history.csv",
    "curves.png",
    "logs",
    "backup",
    "savedmodel",
    "dev_predictions.json",  # squad
    "dev_null_odds.json",
)


def clear_run(output_dir: str) -> None:
    """Removes the files of a run from `output_dir` (`--overwrite`), its
    vocabulary copy included (another run's may have another name)."""
    names = list(RUN_FILES)
    settings = os.path.join(output_dir, "settings.json")
    if os.path.isfile(settings):
        try:
            vocab = read_json(settings)
        except ValueError:  # a broken settings.json goes as well
            vocab = None
        vocab = vocab.get("vocab") if isinstance(vocab, dict) else None
        if isinstance(vocab, str) and vocab == os.path.basename(vocab):
            names.append(vocab)
    for name in names:
        path = os.path.join(output_dir, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)


def mark_finished(output_dir: str, result: dict) -> None:
    """Records that the run in `output_dir` finished, after all its files."""
    state = {
        "finished": True,
        "best_epoch": result["best_epoch"],
        "epochs_run": result["epochs_run"],
    }
    write_json(os.path.join(output_dir, RUN_STATE), state)


def finished_run(task, output_dir: str) -> dict | None:
    """metrics.json of the finished run in `output_dir`, loaded into `task`
    (its config, best model, tokenizer and result); None if none finished.

    Args:
        task: the `Task` to load the run into.
        output_dir: the run's folder.

    Example:
    >>> from albert_keras.tasks import ClassificationTask
    >>> finished_run(ClassificationTask(), "no/such/run") is None
    True
    """
    state = read_json(os.path.join(output_dir, RUN_STATE)) or {}
    if not state.get("finished"):
        return None
    result = read_json(os.path.join(output_dir, "metrics.json"))
    unit = (result or {}).get("evaluated", "epoch")  # or "evaluation"
    print(
        f"{output_dir} holds this run, finished (best: {unit} "
        f"{state.get('best_epoch')} of {state.get('epochs_run')}, see "
        "metrics.json): nothing to do. Use --overwrite (overwrite=True) to "
        "train again there.",
        flush=True,
    )
    _load_into(task, output_dir, result)
    return result


def _load_into(task, output_dir, result):
    import keras

    import albert_keras.models  # noqa: F401  (registers the task models)
    from albert_keras.tasks.task import config_from_dict
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer

    settings = read_json(os.path.join(output_dir, "settings.json"))
    # The task's class is the run's (the settings compared say so).
    task.config = config_from_dict(task.config_class, settings["task"]["config"])
    task.tokenizer = load_tokenizer(os.path.join(output_dir, settings["vocab"]))
    best = os.path.join(output_dir, "best.keras")
    task.model = keras.saving.load_model(best) if os.path.exists(best) else None
    task.result = result
