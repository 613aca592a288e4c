"""`enable_lora`: Keras LoRA adapters on a backbone's dense layers, the rest frozen."""

from __future__ import annotations

import math
import os

import keras

# The backbone's dense layers by name ("output" is the attention's and the
# FFN's), and keras-hub's names for the same projections.
LORA_LAYER_NAMES = (
    "query",
    "key",
    "value",
    "output",
    "intermediate",
    "projection",
    "pooler",
)
_KERAS_HUB_NAMES = {"query_dense": "query", "key_dense": "key", "value_dense": "value"}
DEFAULT_LORA_LAYER_NAMES = ("query", "value")


def lora_targets(target_layer_names) -> tuple:
    """Our layer names for `target_layer_names` (None: query and value).

    Example:
    >>> lora_targets(["query_dense", "value_dense", "query", "value"])
    ('query', 'value')
    """
    if target_layer_names is None:
        return DEFAULT_LORA_LAYER_NAMES
    if isinstance(target_layer_names, str):
        target_layer_names = [target_layer_names]
    names = [_KERAS_HUB_NAMES.get(name, name) for name in target_layer_names]
    unknown = [name for name in names if name not in LORA_LAYER_NAMES]
    if unknown or not names:
        raise ValueError(
            "`target_layer_names` names the backbone's dense layers to adapt, "
            f"among {', '.join(LORA_LAYER_NAMES)} (keras-hub's query_dense, "
            f"key_dense and value_dense too). Received: {target_layer_names!r}"
        )
    return tuple(dict.fromkeys(names))


def enable_lora(backbone, rank, target_layer_names=None) -> int:
    """`AlbertBackbone.enable_lora` (see there); returns the adapter parameters."""
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(
            f"`rank` must be an integer of at least 1. Received: rank={rank!r}"
        )
    names = lora_targets(target_layer_names)
    hidden = backbone.config.hidden_size
    if rank >= hidden:  # A [H, r] and B [r, H]: no smaller than the kernel
        raise ValueError(
            f"A LoRA rank must be below the hidden size {hidden}: adapters of "
            f"rank {hidden} or more are no low-rank update and train more "
            f"parameters than the kernels they adapt. Received: rank={rank}. "
            f"Use at most {hidden - 1} (8 or 16 are usual), or fine-tune "
            "everything (--lora-rank 0)."
        )
    # `_flatten_layers` gives each (shared) layer once, as `quantize` walks.
    layers = backbone._flatten_layers(include_self=False)
    targets = [
        layer
        for layer in layers
        if isinstance(layer, keras.layers.Dense) and layer.name in names
    ]
    small = [d for d in targets if rank >= min(d.kernel.shape)]
    if small:
        raise ValueError(
            f"A LoRA rank must be below the smaller side of each adapted "
            f"kernel: {small[0].path} is {tuple(small[0].kernel.shape)}. "
            f"Received: rank={rank}. Use a smaller rank or leave "
            f"{small[0].name!r} out of `target_layer_names`."
        )
    enabled = next((d for d in layers if getattr(d, "lora_enabled", False)), None)
    if enabled is not None:
        raise ValueError(
            f"LoRA is already enabled on this backbone (rank "
            f"{enabled.lora_rank}): `enable_lora` runs once per model. "
            "Build a new backbone (or load the saved model: saving merges "
            f"the adapters) to enable rank {rank}."
        )
    backbone.trainable = True
    for layer in backbone._flatten_layers(include_self=False):
        layer.trainable = False
    for dense in targets:
        dense.trainable = True
        dense.enable_lora(rank)
        if dense.bias is not None:
            dense.bias.trainable = False
    return sum(
        math.prod(dense.lora_kernel_a.shape) + math.prod(dense.lora_kernel_b.shape)
        for dense in targets
    )


LORA_FILE_END = ".lora.h5"


def _adapted(backbone) -> list:
    """The backbone's dense layers with LoRA on, each (shared) layer once."""
    return [
        layer
        for layer in backbone._flatten_layers(include_self=False)
        if isinstance(layer, keras.layers.Dense)
        and getattr(layer, "lora_enabled", False)
    ]


def _check_lora_path(filepath) -> str:
    filepath = os.fspath(filepath)
    if not filepath.endswith(LORA_FILE_END):
        raise ValueError(
            f"A LoRA weights file ends in {LORA_FILE_END!r} (as keras-hub's). "
            f"Received: {filepath!r}"
        )
    return filepath


def save_lora_weights(backbone, filepath) -> str:
    """`AlbertBackbone.save_lora_weights` (see there)."""
    import h5py

    from albert_keras.atomic_files import save_atomically

    filepath = _check_lora_path(filepath)
    layers = _adapted(backbone)
    if not layers:
        raise ValueError(
            "This backbone has no LoRA adapters to save: call "
            "`enable_lora(rank)` and train first (a model saved with "
            "`save` keeps the adapters merged into its kernels)."
        )

    def write(temporary):
        with h5py.File(temporary, "w") as f:
            f.attrs["rank"] = layers[0].lora_rank
            f.attrs["target_layer_names"] = sorted({layer.name for layer in layers})
            for layer in layers:
                group = f.create_group(layer.path)
                for name in ("lora_kernel_a", "lora_kernel_b"):
                    value = getattr(layer, name)
                    group[name] = keras.ops.convert_to_numpy(value)

    return save_atomically(filepath, write)


def load_lora_weights(backbone, filepath) -> None:
    """`AlbertBackbone.load_lora_weights` (see there)."""
    import h5py

    filepath = _check_lora_path(filepath)
    if not os.path.isfile(filepath):
        raise FileNotFoundError(f"No LoRA weights file {filepath!r}.")
    with h5py.File(filepath, "r") as f:
        rank = int(f.attrs["rank"])
        names = [
            n.decode() if isinstance(n, bytes) else str(n)
            for n in f.attrs["target_layer_names"]
        ]
        values = {}
        f.visititems(
            lambda key, item: (
                values.__setitem__(key, item[()])
                if isinstance(item, h5py.Dataset)
                else None
            )
        )
    layers = _adapted(backbone)
    if not layers:
        enable_lora(backbone, rank, names)
        layers = _adapted(backbone)
    elif layers[0].lora_rank != rank:
        raise ValueError(
            f"{filepath!r} holds rank-{rank} adapters, and this backbone has "
            f"LoRA on at rank {layers[0].lora_rank}: load them into a backbone "
            "without LoRA (it is enabled at the file's rank), or one of that rank."
        )
    _assign(layers, values, filepath)


def _assign(layers, values, filepath):
    """Each adapter from `values` (by layer path), all or none refused."""
    wanted = {
        f"{layer.path}/{name}": getattr(layer, name)
        for layer in layers
        for name in ("lora_kernel_a", "lora_kernel_b")
    }
    missing = sorted(set(wanted) - set(values))
    extra = sorted(set(values) - set(wanted))
    misshapen = [
        k for k in wanted if k in values and values[k].shape != tuple(wanted[k].shape)
    ]
    if missing or extra or misshapen:
        raise ValueError(
            f"The adapters of {filepath!r} do not fit this backbone: "
            f"missing {missing or 'none'}, not in the model {extra or 'none'}, "
            f"of another shape {misshapen or 'none'}. Load them into the "
            "configuration they were trained on."
        )
    for key, variable in wanted.items():
        variable.assign(values[key])
