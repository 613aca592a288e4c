"""`keeping_variables`: a `fit`, `evaluate` or `predict` that fails on JAX
leaves the model usable.

Keras's JAX trainer empties every variable (`_value = None`) while the loop
runs, to hold the weights once, and puts them back only when the loop ends.
An exception in between (a sequence longer than the position table, a label
of the wrong shape: anything that fails while the step is traced) left the
model without weights: every later call failed with "'NoneType' object is
not callable", and only rebuilding the model helped. The values the loop
started from are kept here and put back where Keras left `None`; the state
of the last step that ran, when there is one, goes back first.
"""

from __future__ import annotations

import weakref

import keras


def _held_variables(model):
    """The model's, its metrics' and its built optimizer's variables, once each."""
    variables = list(model.variables) + list(model.metrics_variables)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.built:
        variables += list(optimizer.variables)
    return list({id(v): v for v in variables}.values())


def keeping_variables(model, run, *args, **kwargs):
    """`run(*args, **kwargs)` (the bound `fit`, `evaluate` or `predict`), with
    the variables Keras's JAX trainer emptied put back if it raises.

    Other backends run it as it is. Before `fit` the optimizer is built (as
    Keras's `fit` would do before its loop), so its variables are kept too.

    Args:
        model: the Keras model.
        run: `super().fit`, `super().evaluate` or `super().predict`.
        *args: its arguments.
        **kwargs: its keyword arguments.

    Returns:
        What `run` returns.
    """
    if keras.backend.backend() != "jax":
        return run(*args, **kwargs)
    if getattr(model, "_jax_state", None) and model._jax_state_synced:
        # Left by `train_on_batch` and the like, its values in the variables
        # already or since replaced (`set_weights`): a failed loop must not
        # put it back (Keras's `fit` syncs it in its `finally`, as `_put_back`).
        model._jax_state = None
    optimizer = getattr(model, "optimizer", None)
    if run.__name__ == "fit" and optimizer is not None and not optimizer.built:
        optimizer.build(model.trainable_variables)
    held = [(v, _hold(model, v.value)) for v in _held_variables(model)]
    try:
        return run(*args, **kwargs)
    except BaseException:
        _put_back(model, held)
        raise


def _hold(model, value):
    """`value` itself where the loop donates it (jitted: the buffer is then
    deleted and costs nothing), else a weak reference: a strong one would
    keep a second copy of every weight alive for the whole loop. Before the
    first step ends Keras's own state still holds it; after, `_jax_state`
    holds the newer values that go back first."""
    donated = model.jit_compile and not model.run_eagerly
    if donated or value is None:
        return value
    return weakref.ref(value)


def _put_back(model, held):
    """The last step's state if Keras kept one, then the values held before
    the loop for every variable still empty (none deleted by donation)."""
    if getattr(model, "_jax_state", None):
        model.jax_state_sync()
        model._jax_state = None
    for variable, value in held:
        if isinstance(value, weakref.ref):
            value = value()
        empty = getattr(variable, "_value", False) is None
        if empty and value is not None and not value.is_deleted():
            variable.assign(value)
