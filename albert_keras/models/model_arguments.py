"""Keyword arguments a functional model would drop silently."""

from __future__ import annotations

import inspect

from albert_keras.config_checks import is_positive_int

# What keras.Model's functional constructor keeps; it drops everything else.
_KERAS_ARGUMENTS = ("name", "trainable")


def check_model_kwargs(model_class, kwargs) -> None:
    """Refuses keyword arguments that neither the model nor Keras takes.

    Keras's functional constructor keeps `name` and `trainable` and drops any
    other keyword without a word, so a misspelt `num_clases=3` built a model
    with the default number of classes.

    Args:
        model_class: the model's class (its `__init__` names its arguments).
        kwargs: the `**kwargs` it was given.

    Example:
    >>> from albert_keras.models import AlbertClassifier
    >>> check_model_kwargs(AlbertClassifier, {"name": "classifier"})
    >>> check_model_kwargs(AlbertClassifier, {"num_clases": 3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: AlbertClassifier got an unexpected keyword argument 'num_clases'...
    """
    unknown = [key for key in kwargs if key not in _KERAS_ARGUMENTS]
    if not unknown:
        return
    own = [
        name
        for name, p in inspect.signature(model_class.__init__).parameters.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    names = ", ".join(repr(key) for key in unknown)
    plural = "s" if len(unknown) > 1 else ""
    raise TypeError(
        f"{model_class.__name__} got an unexpected keyword argument{plural} "
        f"{names}. It takes: {', '.join([*own, *_KERAS_ARGUMENTS])}"
    )


def check_backbone(model_class, backbone) -> None:
    """Refuses a task model's `backbone` that is not our `AlbertBackbone`.

    Without it a keras-hub `AlbertBackbone`, a preset name or an
    `AlbertConfig` failed with "'AlbertBackbone' object has no attribute
    'config'".

    Args:
        model_class: the task model's class, named in the message.
        backbone: what its constructor was given.

    Example:
    >>> from albert_keras.models import AlbertClassifier
    >>> check_backbone(AlbertClassifier, "albert_base_v2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: AlbertClassifier takes an albert_keras AlbertBackbone...
    """
    from albert_keras.models.albert_backbone import AlbertBackbone

    if isinstance(backbone, AlbertBackbone):
        return
    name = model_class.__name__
    kind = type(backbone)
    received = f"{kind.__module__}.{kind.__qualname__}"
    if kind.__module__.startswith("keras_hub"):
        fix = (
            "Save the keras-hub model with `.save_to_preset(folder)` and load "
            f"the folder: `{name}.from_preset(folder, ...)` or "
            "`AlbertBackbone.from_preset(folder)`."
        )
    else:
        fix = (
            f"Build one: `{name}(AlbertBackbone(config_or_preset_name), ...)`, "
            f"or load weights with `{name}.from_preset(name_or_path, ...)`."
        )
    raise TypeError(
        f"{name} takes an albert_keras AlbertBackbone as `backbone`. "
        f"Received: {received} {backbone!r:.80}. {fix}"
    )


def check_num_classes(num_classes, meaning: str) -> int:
    """`num_classes` as an int (NumPy's too, `len(np.unique(y))`); a
    `ValueError` naming it unless it is a positive integer.

    Args:
        num_classes: what the model was given.
        meaning: what it counts, for the message ("1 for regression").

    Example:
    >>> check_num_classes(3, "the number of tags")
    3
    >>> check_num_classes(0, "the number of tags")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: `num_classes` must be a positive integer (the number of tags)...
    """
    if not is_positive_int(num_classes):
        raise ValueError(
            f"`num_classes` must be a positive integer ({meaning}). "
            f"Received: num_classes={num_classes!r}"
        )
    return int(num_classes)
