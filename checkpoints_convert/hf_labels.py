"""`hf_labels`, `keep_labels_beside`: a transformers classifier's label names.

A transformers `AlbertForSequenceClassification` folder names each logit in
its `config.json` (`id2label`, e.g. {"0": "neg", "1": "pos"}). Our models
hold no label names: a fine-tuning run keeps them in the `settings.json`
beside its `best.keras` (`task.config.labels`), where `albert-keras
predict` and `--init` (`run_labels`) read them. `albert-convert` of such a
folder to a `.keras` classifier writes the same settings.json beside it,
so the converted model predicts `neg` / `pos`, not 0 / 1.
"""

from __future__ import annotations

import os
import re

# transformers' names when none were given: LABEL_0, LABEL_1, ...
_DEFAULT_NAME = re.compile(r"LABEL_\d+")
# The key of a settings.json written by a conversion (one it may overwrite).
CONVERTED_FROM = "converted_from"
# And the model file it describes (one folder may hold several .keras files).
MODEL = "model"


def hf_labels(folder) -> list | None:
    """The label of each logit the transformers folder `folder` names
    (`id2label` in index order), else None: none, not one per index, not
    distinct strings, or transformers' defaults `LABEL_0`, `LABEL_1`, ...

    ValueError for a `config.json` that is not JSON.

    Example:
    >>> hf_labels("albert_tiny") is None
    True
    """
    from albert_keras.atomic_files import read_json

    config = read_json(os.path.join(os.fspath(folder), "config.json"))
    id2label = config.get("id2label") if isinstance(config, dict) else None
    if not isinstance(id2label, dict) or len(id2label) < 2:
        return None
    try:
        order = sorted(id2label, key=int)
    except ValueError:
        return None
    labels = [id2label[key] for key in order]
    if [int(key) for key in order] != list(range(len(order))):
        return None
    if not all(isinstance(x, str) for x in labels) or len(set(labels)) < len(labels):
        return None
    if all(_DEFAULT_NAME.fullmatch(x) for x in labels):
        return None
    return labels


def keep_labels_beside(source, model, output, vocab=None) -> str | None:
    """Writes, beside the converted `.keras` file `output`, the settings.json
    of a run with the labels of the transformers folder `source`, as
    `albert-keras finetune` writes them; returns what to log, or None where
    there is nothing to keep.

    A settings.json already there that no conversion wrote (a run's) is left
    as it is, and the log says so.

    Args:
        source: what was converted (labels only from a transformers folder).
        model: the converted model (a text model, which `predict` and
            `--init` do not take, keeps none).
        output: the `.keras` file written.
        vocab: the vocabulary kept beside `output`, if any.
    """
    from albert_keras.atomic_files import read_json, write_json
    from checkpoints_convert.hf_checkpoint_reader import is_hf_folder

    # A fine-tuning run's settings: of a classifier or a tagger.
    classes = getattr(model, "num_classes", None)
    if not isinstance(source, (str, os.PathLike)) or not is_hf_folder(source):
        return None
    labels = hf_labels(source)
    if not labels or classes != len(labels):
        return None
    folder = os.path.dirname(os.path.abspath(output))
    path = os.path.join(folder, "settings.json")
    try:
        before = read_json(path)
    except ValueError:
        before = "not JSON"
    if before is not None and not (
        isinstance(before, dict) and CONVERTED_FROM in before
    ):
        return (
            f"labels {', '.join(labels)} (id2label) not kept: {path} exists and "
            "is not a conversion's; convert to another folder to keep them"
        )
    name = os.path.basename(output)
    other = before.get(MODEL) if isinstance(before, dict) else None
    if other not in (None, name) and os.path.exists(os.path.join(folder, other)):
        return (
            f"labels {', '.join(labels)} (id2label) not kept: {path} holds the "
            f"labels of {other}; convert into a folder of its own to keep them"
        )
    settings = {
        "task": _task_settings(model, labels),
        **({"vocab": os.path.basename(vocab)} if vocab else {}),
        CONVERTED_FROM: os.path.abspath(os.fspath(source)),
        MODEL: name,
    }
    write_json(path, settings)
    return f"labels {', '.join(labels)} (id2label) in {path}"


def _task_settings(model, labels) -> dict:
    """The fine-tuning task a converted classifier or tagger would have had."""
    from albert_keras.models.albert_token_classifier import AlbertTokenClassifier

    length = min(128, model.backbone.config.max_position_embeddings)
    if isinstance(model, AlbertTokenClassifier):
        config = {"labels": labels}
        name = "TokenClassificationTask"
    elif getattr(model, "multi_label", False):
        config = {"labels": labels}
        name = "MultiLabelClassificationTask"
    else:
        config = {"num_classes": len(labels), "labels": labels, "pairs": None}
        name = "ClassificationTask"
    return {"class": name, "config": dict(config, sequence_length=length)}


def settings_beside(path) -> dict | None:
    """The `settings.json` of the folder of the model file (or run folder)
    `path`, or None: none there, or a conversion's that describes another
    model file of that folder (it names its `model`). ValueError for one
    that is not JSON.

    Example:
    >>> settings_beside("no/such/best.keras") is None
    True
    """
    from albert_keras.atomic_files import read_json

    path = os.fspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    settings = read_json(os.path.join(folder, "settings.json"))
    named = settings.get(MODEL) if isinstance(settings, dict) else None
    if named and not os.path.isdir(path) and named != os.path.basename(path):
        return None
    return settings
