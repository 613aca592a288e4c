"""Keyword arguments a functional model would drop silently."""

from __future__ import annotations

import inspect

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
