"""`save_hf_checkpoint`: a Keras model as a Hugging Face transformers ALBERT folder."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_checkpoint_reader import HF_CONFIG_FILE, SAFETENSORS
from checkpoints_convert.hf_names import HF_WITHOUT_POOLER, hf_config_dict, hf_key
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import (
    backbone_of,
    model_heads,
    official_weights,
)
from checkpoints_convert.safetensors_file import SafetensorsFile

# Our head parts -> the transformers class with the same head.
_ARCHITECTURES = {
    (): "AlbertModel",
    ("mlm", "sop"): "AlbertForPreTraining",
    ("classifier",): "AlbertForSequenceClassification",
    ("span_qa",): "AlbertForQuestionAnswering",
    ("multiple_choice",): "AlbertForMultipleChoice",
}


def save_hf_checkpoint(model, folder, vocab=None) -> str:
    """Writes a model as a transformers ALBERT folder (`from_pretrained` reads it).

    `model.safetensors` holds the backbone and head under transformers' names
    (`nn.Linear` weights [out, in]), in float32; `config.json` has the
    official fields with transformers' activation names (our "gelu", the
    official tanh form, is their "gelu_new"). The class follows the model:
    `AlbertBackbone` -> `AlbertModel` (keys without the `albert.` prefix, as
    its `save_pretrained` writes them), `AlbertPretrainer` ->
    `AlbertForPreTraining`, `AlbertClassifier` ->
    `AlbertForSequenceClassification` (one output: `problem_type`
    "regression"), `AlbertSpanQA` -> `AlbertForQuestionAnswering`,
    `AlbertMultipleChoice` -> `AlbertForMultipleChoice`. transformers'
    question-answering class has no pooler, so `AlbertSpanQA`'s is not
    written (its span head does not read it). The official SQuAD
    v2 head has no transformers class and raises `ConversionError`.
    Reading the folder back with `load_official_checkpoint` gives identical
    weights.

    Args:
        model: `AlbertBackbone` or a task model (sharing "all" or "none").
        folder: created if needed.
        vocab: optional SentencePiece model, copied as `spiece.model`.

    Returns:
        The folder.

    Example:
    >>> import tempfile
    >>> from albert_keras import AlbertBackbone
    >>> folder = save_hf_checkpoint(AlbertBackbone("albert_tiny"), tempfile.mkdtemp())
    >>> sorted(os.listdir(folder))
    ['config.json', 'model.safetensors']
    """
    folder = os.fspath(folder)
    backbone = backbone_of(model, "save_hf_checkpoint")
    heads = model_heads(model)
    if heads not in _ARCHITECTURES:
        raise ConversionError(
            f"{type(model).__name__} has no transformers counterpart (the "
            "official SQuAD v2 head is not in transformers); save it as .keras "
            "or with save_official_checkpoint."
        )
    architecture = _ARCHITECTURES[heads]
    tensors = {}
    for entry in official_weights(model):
        if entry.row.part == "pooler" and architecture in HF_WITHOUT_POOLER:
            continue  # transformers builds this class without the pooler
        value = np.asarray(entry.variable.numpy(), dtype=np.float32)
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)  # Keras -> official
        key, transform = hf_key(entry.name)
        if transform is TRANSPOSE:
            value = TRANSPOSE(value)  # official -> transformers
        if architecture == "AlbertModel":
            key = key.removeprefix("albert.")
        tensors[key] = value
    config = hf_config_dict(backbone.config, architecture)
    if architecture == "AlbertForSequenceClassification":
        labels = model.num_classes
        config["id2label"] = {str(i): f"LABEL_{i}" for i in range(labels)}
        config["label2id"] = {f"LABEL_{i}": i for i in range(labels)}
        if labels == 1:
            config["problem_type"] = "regression"
    os.makedirs(folder, exist_ok=True)
    SafetensorsFile.write(
        os.path.join(folder, SAFETENSORS), tensors, metadata={"format": "pt"}
    )
    with open(os.path.join(folder, HF_CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    if vocab is not None:
        shutil.copyfile(vocab, os.path.join(folder, "spiece.model"))
    return folder
