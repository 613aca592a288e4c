"""`albert_distribution`: `keras.distribution` data or model parallelism (JAX)."""

from __future__ import annotations

import keras

DISTRIBUTIONS = ("none", "data", "model")

# Variable path pattern -> layout over the ("batch", "model") mesh. The one
# shared block's projections are split Megatron style: query, key, value and
# the FFN's first kernel by output column, the attention output and the FFN's
# second kernel by input row, so each block needs one all-reduce per half.
# The vocabulary axis of the word embeddings (also the MLM output matrix) is
# split too; LayerNorms, biases of the row-split kernels and the small heads
# are replicated.
LAYOUTS = (
    (r".*embeddings/word_embeddings", ("model", None)),
    (r".*embeddings/projection/kernel", (None, "model")),
    (r".*attention/(query|key|value)/kernel", (None, "model")),
    (r".*attention/(query|key|value)/bias", ("model",)),
    (r".*attention/output/kernel", ("model", None)),
    (r".*feed_forward/intermediate/kernel", (None, "model")),
    (r".*feed_forward/intermediate/bias", ("model",)),
    (r".*feed_forward/output/kernel", ("model", None)),
)


def albert_layout_map(device_mesh) -> keras.distribution.LayoutMap:
    """The `LayoutMap` that shards ALBERT's big kernels over the mesh's "model" axis.

    Args:
        device_mesh: a `keras.distribution.DeviceMesh` with axes ("batch",
            "model"). The sharded sizes (hidden, intermediate, vocabulary,
            heads x head size) must divide by the "model" axis.

    Example:
    >>> mesh = keras.distribution.DeviceMesh((1, 1), ("batch", "model"))
    >>> layout_map = albert_layout_map(mesh)
    >>> layout_map["encoder/group_0_inner_group_0/attention/query/kernel"].axes
    (None, 'model')
    """
    layout_map = keras.distribution.LayoutMap(device_mesh)
    for pattern, axes in LAYOUTS:
        layout_map[pattern] = axes
    return layout_map


def albert_distribution(kind: str = "none", model_shards: int = 2):
    """A `keras.distribution.Distribution` over all devices of the job, or None.

    Args:
        kind: "none"; "data" (`DataParallel`: the global batch split over every
            device, weights replicated); "model" (`ModelParallel` over a
            (devices / model_shards, model_shards) mesh with
            `albert_layout_map`: each batch split over the first axis, the big
            kernels over the second).
        model_shards: devices each kernel is split over, for "model".

    Use it as `with distribution.scope():` around building and training the
    model (`run_pretraining(distribution=...)` does). JAX only: TensorFlow
    distributes with `tf.distribute` strategies instead. On one device it
    returns None: the same training, each step compiled once.

    Example:
    >>> albert_distribution("none") is None
    True
    """
    if kind not in DISTRIBUTIONS:
        raise ValueError(
            f"Unknown distribution. Received: {kind!r}. "
            f"Allowed: {', '.join(DISTRIBUTIONS)}"
        )
    if kind == "none":
        return None
    if keras.backend.backend() != "jax":
        raise ValueError(
            f"--distribution {kind} runs on JAX (KERAS_BACKEND=jax); on "
            f"{keras.backend.backend()} use --strategy (TensorFlow: mirrored, "
            "multi_worker, tpu)."
        )
    devices = keras.distribution.list_devices()
    if kind == "model" and (model_shards < 1 or len(devices) % model_shards):
        raise ValueError(
            f"--model-shards {model_shards} does not divide the {len(devices)} "
            f"devices: pass a divisor of {len(devices)}."
        )
    if len(devices) == 1:
        # Nothing to split. Keras 3.15 on one device would also compile the
        # training step three times (the first state's arrays are not placed
        # on the device, the step's outputs are, the metrics reset for the
        # second epoch are not): 6.5 s lost on an H100 for albert_small.
        return None
    if kind == "data":
        return keras.distribution.DataParallel(devices=devices)
    mesh = keras.distribution.DeviceMesh(
        (len(devices) // model_shards, model_shards), ("batch", "model"), devices
    )
    return keras.distribution.ModelParallel(
        layout_map=albert_layout_map(mesh), batch_dim_name="batch"
    )


def check_model_shards(config, model_shards: int) -> None:
    """Refuses a config whose split sizes do not divide by `model_shards`.

    Args:
        config: an `AlbertConfig`.
        model_shards: the "model" axis of `albert_distribution("model", ...)`.

    Example:
    >>> from albert_keras.config import AlbertConfig
    >>> check_model_shards(AlbertConfig.from_preset("albert_tiny"), 2)
    """
    sizes = {
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "vocab_size": config.vocab_size,
    }
    bad = {name: size for name, size in sizes.items() if size % model_shards}
    if bad:
        raise ValueError(
            f"--model-shards {model_shards} does not divide {bad}: ModelParallel "
            "splits these sizes over the shards. Pick a --model-shards dividing "
            "them (a --vocab-size that is a multiple of it, e.g. 32000), or "
            "--distribution data."
        )
