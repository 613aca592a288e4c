"""`add_traced_endpoint`: a SavedModel signature traced once, not twice.

`keras.export.ExportArchive.add_endpoint(name, fn, input_signature=...)`
keeps a `tf.function` that `tf.saved_model.save` traces again inside its save
context (the first trace, outside it, lists the variables): every export then
traced the model and the tokenizer twice. Here `fn` is traced once, and the
endpoint is a function that calls that graph: its second trace is one op.
"""

from __future__ import annotations

import functools

import tensorflow as tf


def add_traced_endpoint(archive, name, function, input_signature):
    """`archive.add_endpoint(name, function, input_signature)`, traced once.

    Args:
        archive: a `keras.export.ExportArchive`.
        name: the endpoint's (and signature's) name.
        function: takes tensors of `input_signature`; returns a dict of tensors.
        input_signature: list of `tf.TensorSpec`.

    Returns:
        The `tf.function` added.

    Example:
    >>> import keras, tensorflow as tf
    >>> archive = keras.export.ExportArchive()
    >>> double = add_traced_endpoint(
    ...     archive, "serve", lambda x: {"y": x * 2},
    ...     [tf.TensorSpec([None], tf.float32)])
    >>> double(tf.constant([1.0, 2.0]))["y"].numpy().tolist()
    [2.0, 4.0]
    """
    concrete = tf.function(
        function, input_signature=input_signature, autograph=False
    ).get_concrete_function()

    # The endpoint only calls the traced graph: tracing it again costs one op.
    # (`wraps` keeps the argument names: the signature's input names.)
    @functools.wraps(function)
    def endpoint(*inputs):
        return concrete(*inputs)

    return archive.add_endpoint(name, endpoint, input_signature=input_signature)
