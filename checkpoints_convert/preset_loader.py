"""`load_preset` and `save_preset`: what the models' `from_preset` and
`save_to_preset` do (installed by `albert_keras/__init__.py`, since the
models may not import this package)."""

from __future__ import annotations

import os

from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.keras_file_loader import (
    as_model_class,
    built,
    keras_file_report,
    read_keras_file,
)
from checkpoints_convert.loader import load_official_checkpoint, open_checkpoint
from checkpoints_convert.preset_sources import resolve_preset, source_kind, unpacked


def load_preset(cls, preset, load_weights=True, dtype=None, **kwargs):
    """A model of class `cls` from a preset name or path (any kind).

    Args:
        cls: `AlbertBackbone` or a task model class.
        preset: see `resolve_preset` (bare names) and `source_kind` (paths).
        load_weights: False: the source's config, random weights.
        dtype: dtype policy of the built model (a `.keras` file keeps its own).
        **kwargs: task model arguments, e.g. `num_classes`.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> load_preset(AlbertBackbone, "albert_base_v2")  # doctest: +SKIP
    Traceback (most recent call last):
    FileNotFoundError: No local weights for preset 'albert_base_v2': ...
    """
    path = resolve_preset(preset)
    kind = source_kind(path)
    if kind == "keras":
        # The same class as saved, or its backbone (under a new head).
        saved = read_keras_file(path, dtype)
        model = as_model_class(saved, cls, load_weights, kwargs)
        if load_weights:
            model.conversion_report = keras_file_report(path, saved, model)
        return model
    if kind == "official_tar":
        with unpacked(path) as folder:
            return load_preset(cls, folder, load_weights, dtype, **kwargs)
    if not load_weights:
        return built(cls, open_checkpoint(path).load_config(), dtype, kwargs)
    return load_official_checkpoint(path, model=cls, dtype=dtype, **kwargs)


def save_preset(model, folder, tokenizer=None) -> str:
    """`model.save_to_preset(folder, tokenizer)`: a keras-hub preset folder.

    Args:
        model: `AlbertBackbone` or a task model.
        folder: the preset folder.
        tokenizer: None, an `AlbertTokenizer` or a SentencePiece `.model` path.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> save_preset(AlbertBackbone("albert_tiny"), "out")  # doctest: +SKIP
    'out'
    """
    import tempfile

    from albert_keras.tokenizers.albert_tokenizer import AlbertTokenizer
    from checkpoints_convert.keras_hub_writer import save_keras_hub_preset

    if tokenizer is None or isinstance(tokenizer, (str, os.PathLike)):
        return save_keras_hub_preset(model, folder, vocab=tokenizer)
    if not isinstance(tokenizer, AlbertTokenizer):
        raise ConversionError(
            "keras-hub's AlbertTokenizer is SentencePiece only: pass an "
            f"AlbertTokenizer or a .model path. Received: {type(tokenizer).__name__}"
        )
    with tempfile.TemporaryDirectory() as assets:
        tokenizer.save_assets(assets)
        (name,) = os.listdir(assets)
        return save_keras_hub_preset(model, folder, vocab=os.path.join(assets, name))
