"""Which layers of a model are quantized, so a saved model comes back quantized.

`model.quantize("int8")` replaces the float kernels of the `Dense` layers by
int8 kernels and scales. A `.keras` file holds the config and those weights,
but our models rebuild their layers from the config in float: the weights
would not fit. The models therefore record `{layer path: mode}` in their
config (`quantized_config`) and quantize the freshly built layers again
in `from_config` (`quantize_again`) before Keras loads the saved int8 weights
into them. The layers being quantized there hold random weights: only the
shapes and dtypes of the variables matter.

Example:
>>> from albert_keras import AlbertBackbone
>>> backbone = AlbertBackbone("albert_tiny")
>>> backbone.quantize("int8")
>>> modes = quantized_layer_modes(backbone)
>>> modes["pooler"]
'int8'
>>> again = AlbertBackbone("albert_tiny")
>>> quantize_again(again, modes)
>>> again.get_layer("pooler").quantization_mode
'int8'
"""

from __future__ import annotations

import contextlib
import gc
import warnings

# The config entry; float models leave it out (their configs stay as before).
QUANTIZED_LAYERS = "quantized_layers"


def _own_layers(model, skip):
    """The layers under `model` (itself excluded) that are not under `skip`.

    `_flatten_layers` is the walk `keras.Model.quantize` itself makes.
    """
    skipped = set()
    if skip is not None:
        skipped = {id(layer) for layer in skip._flatten_layers(include_self=True)}
    return [
        layer
        for layer in model._flatten_layers(include_self=False)
        if id(layer) not in skipped
    ]


def quantized_layer_modes(model, skip=None) -> dict:
    """`{layer.path: quantization_mode}` of the quantized layers of `model`.

    Args:
        model: a built Keras model.
        skip: a sub-model whose layers are left out (a task model's backbone,
            which records its own).
    """
    return {
        layer.path: layer.quantization_mode
        for layer in _own_layers(model, skip)
        if layer.quantization_mode is not None
    }


def quantized_config(model, skip=None) -> dict:
    """`{"quantized_layers": modes}` for `get_config`, or `{}` if none is."""
    modes = quantized_layer_modes(model, skip)
    return {QUANTIZED_LAYERS: modes} if modes else {}


def quantize_again(model, modes: dict, skip=None) -> None:
    """Quantizes the layers named in `modes` (from `quantized_layer_modes`).

    Args:
        model: the model just rebuilt from its config.
        modes: `{layer path: mode}`.
        skip: a sub-model left as it is (already quantized by its own config).
    """
    if not modes:
        return
    own = _own_layers(model, skip)
    unknown = set(modes) - {layer.path for layer in own}
    if unknown:
        raise ValueError(
            "The saved config names quantized layers this model does not have: "
            f"{sorted(unknown)}. Was the file written by another albert_keras "
            "version? Re-export it from the float model."
        )
    own_ids = {id(layer) for layer in own}
    for mode in sorted(set(modes.values())):

        def wanted(layer, mode=mode):
            return id(layer) in own_ids and modes.get(layer.path) == mode

        with warnings.catch_warnings():
            # "Layer X does not have a `quantize` method": only the layers
            # filtered in are quantized, the others are asked too. (Our
            # models' `quantize` is `quantize_quietly`: one collection.)
            warnings.simplefilter("ignore", UserWarning)
            model.quantize(mode, filters=wanted)


def quantize_quietly(quantize, mode=None, **kwargs) -> None:
    """Runs a model's `keras.Model.quantize` (passed bound, as `super().quantize`)
    with one garbage collection at the end, not one per float kernel dropped,
    and without Keras's warning for each layer that has nothing to quantize
    (LayerNorm, dropout, the inputs).

    Args:
        quantize: the bound `keras.Model.quantize`.
        mode: "int8", ... as `keras.Model.quantize`.
        **kwargs: its other arguments (`config`, `filters`).
    """
    with warnings.catch_warnings(), _one_collection():
        warnings.filterwarnings(
            "ignore", "Layer .* does not have a `quantize` method", UserWarning
        )
        quantize(mode, **kwargs)


@contextlib.contextmanager
def _one_collection():
    """One `gc.collect()` at the end instead of one per float kernel dropped.

    Keras's `Layer.__delattr__` collects after each variable it deletes, which
    takes ~0.4 s in a process that has imported TensorFlow: seconds per load
    for the random kernels that `quantize` replaces here.
    """
    collect = gc.collect
    gc.collect = lambda generation=2: 0
    try:
        yield
    finally:
        gc.collect = collect
        collect()
