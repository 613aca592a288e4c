"""A `.keras` file of ours as a model of any class: what `from_preset` and
`load_official_checkpoint` do with one (`preset_loader` and `loader` share it)."""

from __future__ import annotations

import os
import zipfile

import keras

from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.conversion_report import ConversionReport
from checkpoints_convert.official_layout import model_heads


def check_keras_file(path) -> None:
    """ConversionError naming `path` unless it is a .keras file (a zip archive)."""
    if not zipfile.is_zipfile(path):  # False for a missing file or a folder
        what = "it is not a zip archive" if os.path.isfile(path) else "no such file"
        raise ConversionError(
            f"Cannot load {path!r} as a .keras model: {what}. Pass a .keras "
            "file saved by albert-keras (e.g. a run's best.keras)."
        )


def read_keras_file(path, dtype=None):
    """The albert-keras model saved in `path` (a text model's task model).

    Args:
        path: a `.keras` file of albert-keras.
        dtype: must be None: the file keeps the dtype it was saved with.

    Example:
    >>> read_keras_file("pretrainer.keras")  # doctest: +SKIP
    <AlbertPretrainer ...>
    """
    import albert_keras  # noqa: F401  (registers every class of ours)

    if dtype is not None:
        raise ConversionError(
            f"{path!r} is a .keras file, which keeps the dtype it was saved "
            "with: load it without dtype=, or convert a checkpoint instead."
        )
    check_keras_file(path)
    model = keras.saving.load_model(path, compile=False)
    model = getattr(model, "task_model", model)  # a text model wraps one
    if not isinstance(model, keras.Model) or not hasattr(
        getattr(model, "backbone", model), "config"
    ):
        raise ConversionError(
            f"{path!r} holds a {type(model).__name__}, not an albert-keras model."
        )
    return model


_MISSING = object()


def as_model_class(model, cls, load_weights=True, kwargs=None):
    """`model` as a `cls`: itself, its backbone, or its backbone under a new head.

    Args:
        model: a loaded albert-keras model (`read_keras_file`).
        cls: `AlbertBackbone` or a task model class.
        load_weights: False: `model`'s config, random weights.
        kwargs: task model arguments, e.g. `num_classes`.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertClassifier
    >>> classifier = AlbertClassifier(AlbertBackbone("albert_tiny"), num_classes=2)
    >>> as_model_class(classifier, AlbertBackbone) is classifier.backbone
    True
    """
    from albert_keras.models import AlbertBackbone

    kwargs = kwargs or {}
    backbone = model if isinstance(model, AlbertBackbone) else model.backbone
    if not load_weights:  # the same class keeps the head it was saved with
        saved = _task_arguments(model) if type(model) is cls else {}
        return built(cls, backbone.config, None, {**saved, **kwargs})
    if type(model) is cls and all(
        getattr(model, key, _MISSING) == value for key, value in kwargs.items()
    ):
        return model  # the arguments it was saved with: its trained head too
    if issubclass(cls, AlbertBackbone):
        if kwargs:
            raise TypeError(f"A backbone takes no task arguments: {sorted(kwargs)}")
        return backbone
    return cls(backbone, **kwargs)


def _task_arguments(model) -> dict:
    """What a task model was built with besides its backbone (`num_classes`...)."""
    config = model.get_config()
    for key in ("backbone", "name", "trainable", "dtype"):
        config.pop(key, None)
    return config


def built(cls, config, dtype, kwargs):
    """A new `cls` of `config` (a task model on a new backbone)."""
    from albert_keras.models import AlbertBackbone

    if issubclass(cls, AlbertBackbone):
        return cls(config, dtype=dtype, **kwargs)
    return cls(AlbertBackbone(config, dtype=dtype), **kwargs)


def keras_file_report(path, saved, model) -> ConversionReport:
    """What `as_model_class` made of the model saved in `path`, by weight path.

    Example:
    >>> report = keras_file_report("c.keras", classifier, backbone)  # doctest: +SKIP
    >>> report.skipped_heads  # doctest: +SKIP
    ('classifier/kernel', 'classifier/bias')
    """
    from albert_keras.tokenizers.vocabulary_files import vocabulary_beside

    kept = {id(v) for v in saved.weights}
    used = {id(v) for v in model.weights}
    return ConversionReport(
        checkpoint=os.fspath(path),
        prefix_choice="a .keras file",
        config_source=f"{os.fspath(path)} (saved with the model)",
        model=type(model).__name__,
        loaded=tuple(v.path for v in model.weights if id(v) in kept),
        skipped_heads=tuple(v.path for v in saved.weights if id(v) not in used),
        ignored=(),
        new_heads=() if model is saved else model_heads(model),
        vocab_path=vocabulary_beside(path),
    )
