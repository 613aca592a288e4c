"""Attribute assignment before `keras.Model.__init__`, on every backend."""

from __future__ import annotations

import keras


def early_setattr(model, name, value, setattr_of_super) -> None:
    """`setattr` for functional models that create their layers first.

    Our models assign their layers as attributes and then call
    `super().__init__(inputs, outputs)`. On the PyTorch backend a Keras model
    is a `torch.nn.Module`, which refuses submodules before its `__init__`;
    there (and for properties) the attribute is set plainly. The functional
    graph tracks the layers and their weights anyway.

    Args:
        model: the model being built.
        name, value: the attribute.
        setattr_of_super: `super().__setattr__` of the caller.
    """
    is_property = isinstance(getattr(type(model), name, None), property)
    uninitialized = "_modules" not in model.__dict__
    if keras.backend.backend() == "torch" and (is_property or uninitialized):
        object.__setattr__(model, name, value)
    else:
        setattr_of_super(name, value)
