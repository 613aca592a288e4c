"""`load_from_preset`, `save_to_preset`: the models' presets, without the converters.

Reading checkpoints is `checkpoints_convert`'s job, a layer above the models
(pyproject.toml's import contract): the models never import it. The package
root, above every layer, installs the two functions with
`set_preset_functions` when this module is imported
(`albert_keras/__init__.py`), so `from_preset` loads weights and
`save_to_preset` writes keras-hub's layout while the models only know two
callables.
"""

from __future__ import annotations

_FUNCTIONS = {}
# keras-hub's ALBERT preset names: nothing is downloaded here, so they (and
# keras-hub handles and URLs) are refused with the way to load them.
KERAS_HUB_NAMES = (
    "albert_base_en_uncased",
    "albert_large_en_uncased",
    "albert_extra_large_en_uncased",
    "albert_extra_extra_large_en_uncased",
)
_NOT_INSTALLED = (
    "No preset functions installed: import albert_keras (the package) first; "
    "it connects checkpoints_convert, which reads and writes the presets."
)


def set_preset_functions(load, save) -> None:
    """Installs `load(cls, preset, load_weights, dtype, **kwargs)` and
    `save(model, folder, tokenizer)`."""
    _FUNCTIONS.update(load=load, save=save)


def save_to_preset(model, folder, tokenizer=None):
    """Writes `model` (and `tokenizer`) as a keras-hub preset folder."""
    if "save" not in _FUNCTIONS:
        raise RuntimeError(_NOT_INSTALLED)
    return _FUNCTIONS["save"](model, folder, tokenizer=tokenizer)


def load_from_preset(cls, preset, load_weights=True, dtype=None, **kwargs):
    """A model of class `cls` from a preset name or a saved model / checkpoint.

    Args:
        cls: `AlbertBackbone` or a task model class.
        preset: a preset name (weights from the local cache) or a path: a
            keras-hub preset folder, an official release folder or .tar.gz, a
            TF1 Hub module folder, a transformers folder or a `.keras` file.
        load_weights: False builds the config's model with random weights.
        dtype: dtype policy of the built model.
        **kwargs: task model arguments (`num_classes`, ...); for a backbone
            with `load_weights=False`, config overrides.

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> model = load_from_preset(AlbertBackbone, "albert_tiny", load_weights=False)
    >>> model.config.hidden_size
    64
    """
    from albert_keras.config import AlbertConfig
    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.presets import ALIASES, PRESETS

    named = isinstance(preset, str) and (preset in PRESETS or preset in ALIASES)
    if not load_weights and named:
        if issubclass(cls, AlbertBackbone):
            return cls(AlbertConfig.from_preset(preset, **kwargs), dtype=dtype)
        backbone = AlbertBackbone(AlbertConfig.from_preset(preset), dtype=dtype)
        return cls(backbone, **kwargs)
    _refuse_remote(preset)
    if "load" not in _FUNCTIONS:
        raise RuntimeError(_NOT_INSTALLED)
    load = _FUNCTIONS["load"]
    return load(cls, preset, load_weights=load_weights, dtype=dtype, **kwargs)


def _refuse_remote(preset) -> None:
    """ValueError for a keras-hub preset name or a remote handle that is not
    a local path: `from_preset` reads local files and cached weights only.

    Example:
    >>> _refuse_remote("albert_base_en_uncased")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'albert_base_en_uncased' is a keras-hub preset...
    """
    import os

    if not isinstance(preset, str) or os.path.exists(preset):
        return
    if preset.startswith(("http://", "https://", "gs://")):
        raise ValueError(
            f"{preset!r} is a URL: `from_preset` downloads nothing. Download the "
            f"file (`curl -LO {preset}`, or `gcloud storage cp`) and pass its "
            "local path."
        )
    if preset in KERAS_HUB_NAMES:
        what = "a keras-hub preset name"
    elif preset.startswith(("kaggle://", "hf://")):
        what = "a keras-hub handle"
    else:
        return
    raise ValueError(
        f"{preset!r} is {what}: `from_preset` downloads nothing. Download it "
        "with keras-hub and save it as a folder, "
        f"`keras_hub.models.AlbertBackbone.from_preset({preset!r})"
        '.save_to_preset("folder")`, then pass "folder"; or use our preset '
        "names (albert_base_v2, ...) with weights converted into the cache "
        "(see docs/keras-hub.md)."
    )
