"""Official TF1 checkpoints -> Keras models (`load_official_checkpoint`) and back."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
)
from checkpoints_convert.name_table import TRANSPOSE, weight_table
from checkpoints_convert.official_checkpoint import OfficialCheckpoint

MODELS = {
    "backbone": AlbertBackbone,
    "pretrainer": AlbertPretrainer,
    "classifier": AlbertClassifier,
    "span_qa": AlbertSpanQA,
    "multiple_choice": AlbertMultipleChoice,
}
# Which config fields decide the shape of a variable, for error messages.
_SHAPE_FIELDS = [
    (r"word_embeddings|output_bias$", "vocab_size, embedding_size"),
    (r"position_embeddings", "max_position_embeddings, embedding_size"),
    (r"token_type_embeddings", "type_vocab_size, embedding_size"),
    (r"embeddings/LayerNorm|transform/", "embedding_size, hidden_size"),
    (r"embedding_hidden_mapping_in", "embedding_size, hidden_size"),
    (r"ffn_1", "hidden_size, intermediate_size"),
    (r".", "hidden_size"),
]


def _config_fields(name):
    return next(fields for pattern, fields in _SHAPE_FIELDS if re.search(pattern, name))


def _as_config(config, checkpoint):
    if isinstance(config, AlbertConfig):
        return config
    if isinstance(config, dict):
        return AlbertConfig.from_dict(config)
    if isinstance(config, (str, os.PathLike)):
        return AlbertConfig.from_json_file(config)
    if checkpoint.config_path is None:
        raise FileNotFoundError(
            f"No albert_config.json beside {checkpoint.prefix!r} (or in assets/). "
            "Pass the release's config: config='albert_config.json'."
        )
    return AlbertConfig.from_json_file(checkpoint.config_path)


def _warn_head_count(config):
    if config.hidden_size == 2048 and config.num_hidden_layers == 24:
        warnings.warn(
            "ALBERT-xlarge: the releases disagree on the head count (the v2 "
            "albert_config.json says 32, v1 and the hub pages 16; albert#180). "
            "Heads are not visible in the weights; using the config's "
            f"num_attention_heads={config.num_attention_heads}.",
            stacklevel=3,
        )


def _build(model, config, checkpoint, dtype, kwargs):
    cls = MODELS.get(model, model) if isinstance(model, str) else model
    if isinstance(model, str) and model not in MODELS:
        raise ValueError(
            f"Unknown model. Received: {model!r}. Allowed: {', '.join(MODELS)}"
        )
    backbone = AlbertBackbone(config, dtype=dtype)
    if cls is AlbertBackbone:
        return backbone
    if cls is AlbertClassifier and "num_classes" not in kwargs:
        if "output_weights" not in checkpoint.names:
            raise ValueError(
                f"{checkpoint.prefix!r} has no run_classifier head (root "
                "`output_weights`); pass num_classes=N to start a new head, or "
                "load model='backbone'."
            )
        kwargs = dict(kwargs, num_classes=checkpoint.shape("output_weights")[0])
    return cls(backbone, **kwargs)


def load_official_checkpoint(path, model="backbone", config=None, dtype=None, **kwargs):
    """Builds a Keras model and loads an official google-research checkpoint into it.

    Every checkpoint variable is consumed or explicitly skipped (optimizer
    slots and `global_step`; heads the requested model does not have, which
    are reported), every Keras weight is set exactly once, and all shapes are
    checked before anything is assigned. A missing or mismatched variable is
    an error that names it and the config fields that decide its shape.

    Args:
        path: release folder, checkpoint prefix, or TF1 Hub module folder.
        model: "backbone", "pretrainer", "classifier", "span_qa",
            "multiple_choice", or one of the model classes.
        config: `AlbertConfig`, dict or path; default: the `albert_config.json`
            of the release (or the hub module's assets).
        dtype: dtype policy of the model.
        **kwargs: task model arguments (e.g. `num_classes` when starting a new
            classifier head on a pretraining checkpoint).

    Returns:
        The model, with `model.conversion_report` (dict: loaded, skipped heads,
        ignored optimizer variables).

    Example:
    >>> model = load_official_checkpoint("albert_base_v2")  # doctest: +SKIP
    """
    checkpoint = OfficialCheckpoint(path)
    config = _as_config(config, checkpoint)
    _warn_head_count(config)
    keras_model = _build(model, config, checkpoint, dtype, kwargs)
    table = weight_table(keras_model)

    # Check everything before assigning anything.
    problems = []
    for name, (variable, transform) in table.items():
        if name not in checkpoint.names:
            hint = ""
            if name.startswith("bert/encoder/transformer/group_"):
                hint = (
                    f" (config: num_hidden_groups={config.num_hidden_groups}, "
                    f"inner_group_num={config.inner_group_num}, "
                    f"num_hidden_layers={config.num_hidden_layers})"
                )
            elif "embedding_hidden_mapping_in" in name:
                hint = " (the checkpoint seems to have embedding_size == hidden_size)"
            problems.append(f"missing variable {name!r}{hint}")
            continue
        stored = checkpoint.shape(name)
        expected = tuple(variable.shape)
        wanted = expected[::-1] if transform == TRANSPOSE else expected
        if stored != wanted:
            cause = f"check {_config_fields(name)} in the config"
            if stored == wanted[::-1] and len(stored) == 2:
                cause = "the kernel is transposed"
            problems.append(
                f"shape mismatch for {name!r}: checkpoint {list(stored)}, model "
                f"expects {list(wanted)} ({cause})"
            )
    unused = [
        n
        for n in checkpoint.names
        if n not in table and not checkpoint.is_ignored(n) and not checkpoint.is_head(n)
    ]
    for name in unused:
        hint = ""
        if re.search(r"/group_\d+/", name):
            hint = (
                " (the checkpoint has more groups than the config's "
                f"num_hidden_groups={config.num_hidden_groups})"
            )
        elif "embedding_hidden_mapping_in" in name:
            hint = " (config has embedding_size == hidden_size, the checkpoint not)"
        problems.append(f"unexpected variable {name!r}{hint}")
    if problems:
        raise ValueError(
            f"Cannot load {checkpoint.prefix!r} into {type(keras_model).__name__}:\n  "
            + "\n  ".join(problems)
        )

    for name, (variable, transform) in table.items():
        value = checkpoint.read(name)
        if transform == TRANSPOSE:
            value = value.T
        variable.assign(value.astype(variable.dtype))
    keras_model.conversion_report = {
        "checkpoint": checkpoint.prefix,
        "loaded": len(table),
        "skipped_heads": sorted(
            n for n in checkpoint.names if n not in table and checkpoint.is_head(n)
        ),
        "ignored": sorted(n for n in checkpoint.names if checkpoint.is_ignored(n)),
        "vocab": checkpoint.vocab_path,
    }
    return keras_model


def save_official_checkpoint(model, prefix, write_config=True):
    """Writes a Keras model as an official TF1 checkpoint (`prefix.index`, `.data-*`).

    The official code restores it (`tf.compat.v1.train.Saver`) with the same
    outputs; loading it back with `load_official_checkpoint` is bit-exact.
    `albert_config.json` is written beside it.

    Args:
        model: `AlbertBackbone` or a task model.
        prefix: checkpoint prefix, e.g. "out/model.ckpt-best".
        write_config: also write `albert_config.json` in the same folder.

    Example:
    >>> save_official_checkpoint(model, "out/model.ckpt-best")  # doctest: +SKIP
    """
    import tensorflow as tf

    table = weight_table(model)
    names, values = [], []
    for name, (variable, transform) in sorted(table.items()):
        value = np.asarray(variable.numpy())
        names.append(name)
        values.append(value.T if transform == TRANSPOSE else value)
    folder = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(folder, exist_ok=True)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(v) for v in values],
    )
    if write_config:
        backbone = getattr(model, "backbone", model)
        backbone.config.to_json_file(os.path.join(folder, "albert_config.json"))
    return prefix
