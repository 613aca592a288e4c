"""`save_official_checkpoint`: a Keras model as a google-research TF1 checkpoint."""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_keras.atomic_files import make_folder
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import (
    backbone_of,
    official_config,
    official_weights,
)
from checkpoints_convert.written_files import refuse_another_checkpoint


def save_official_checkpoint(model, prefix, config_path=True) -> str:
    """Writes a model as a TF1 name-based checkpoint with the official names.

    Writes `prefix.index` and `prefix.data-00000-of-00001` holding the
    backbone and whatever heads the model has, under the names the official
    code uses (`bert/...`, `cls/...`, root `output_weights` for a classifier
    or multiple-choice head, `cls/squad/...` for span QA), in float32 as the
    official graph expects. The official code restores it with
    `tf.compat.v1.train.Saver` (or `init_checkpoint=prefix`); loading it back
    with `load_official_checkpoint` gives bit-identical weights (bfloat16 and
    float16 weights widen to float32 exactly).

    Args:
        model: `AlbertBackbone` or a task model. Models with sharing
            "attention" or "ffn" have no official layout and raise
            `ConversionError`; sharing "none" is written as one group per layer.
        prefix: checkpoint prefix, e.g. "out/model.ckpt-best"; folders are
            created. A folder holding a checkpoint of another kind (a
            transformers or keras-hub one) is refused.
        config_path: True writes `albert_config.json` beside the checkpoint; a
            path writes it there; False or None writes none.

    Returns:
        The prefix.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> prefix = save_official_checkpoint(
    ...     AlbertBackbone("albert_tiny"), os.path.join(folder, "model.ckpt-best")
    ... )
    >>> sorted(os.listdir(folder))[:2]
    ['albert_config.json', 'model.ckpt-best.data-00000-of-00001']
    """
    prefix = os.fspath(prefix)
    backbone = backbone_of(model, "save_official_checkpoint")
    config = official_config(backbone.config)  # raises before writing anything
    folder = os.path.dirname(os.path.abspath(prefix))
    refuse_another_checkpoint(folder, "official")
    entries = official_weights(model)
    names, tensors = [], []
    for entry in entries:
        value = np.asarray(entry.variable.numpy())
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)
        names.append(entry.name)
        tensors.append(tf.constant(value.astype("float32")))
    make_folder(folder, prefix)
    # SaveV2 is what tf.compat.v1.train.Saver runs; eager, it needs no graph.
    with tf.device("CPU:0"):
        tf.raw_ops.SaveV2(
            prefix=prefix,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=tensors,
        )
    if config_path is True:
        config_path = os.path.join(folder, "albert_config.json")
    if config_path:
        config.to_json_file(config_path)
    return prefix
