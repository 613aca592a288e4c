"""`copy_weights`: one model's weights into another of the same architecture,
the position table allowed to grow (fine-tune or continue pretraining on longer
sequences than a model was pretrained with); `with_positions`,
`with_dropout` and `with_gradient_checkpointing`, a backbone copied with a
longer table, other dropout, or its blocks recomputed in the backward pass."""

from __future__ import annotations

import keras
import numpy as np

POSITION_TABLE = "position_embeddings"


def copy_weights(source: keras.Model, target: keras.Model) -> int:
    """Assigns `source`'s weights to `target`, extending a shorter position table.

    The two models must be the same architecture (same layers, same variable
    order). Every variable must have the same shape in both, but the
    position embeddings: a target with more positions (`max_position_embeddings`)
    gets the source's rows first and then the same rows again, tiled, until
    its table is full (learned absolute positions copied, as Longformer
    extends RoBERTa's), a good start for continued pretraining or fine-tuning
    on the longer sequences.

    Args:
        source: the model to copy from, e.g. a loaded `pretrainer.keras`.
        target: the model to copy into, built, of the same class.

    Returns:
        The number of positions the source had when the target's table was
        longer (its rows from there on are copies), else 0.

    Raises:
        ValueError: naming the first variable whose shapes differ otherwise
            (nothing is assigned then).

    Example:

    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> short = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> long = AlbertBackbone(
    ...     AlbertConfig.from_preset("albert_tiny", max_position_embeddings=256)
    ... )
    >>> copy_weights(short, long)
    128
    """
    theirs, ours = source.weights, target.weights
    if len(theirs) != len(ours):
        raise ValueError(
            f"Cannot copy the weights of {source.name} ({len(theirs)} variables) "
            f"into {target.name} ({len(ours)} variables): not the same architecture."
        )
    plan = []  # (target, value) pairs, all checked before any is assigned
    extended_from = 0
    for s, t in zip(theirs, ours, strict=True):
        if tuple(s.shape) == tuple(t.shape):
            plan.append((t, s))
        elif _longer_position_table(s, t):
            rows = keras.ops.convert_to_numpy(s)
            reps = -(-t.shape[0] // rows.shape[0])
            plan.append((t, np.tile(rows, (reps, 1))[: t.shape[0]]))
            extended_from = rows.shape[0]
        else:
            raise ValueError(
                f"Shape mismatch copying {s.path} {tuple(s.shape)} into {t.path} "
                f"{tuple(t.shape)}: the models' configs differ (only a longer "
                "position table can be filled from a shorter one); build the "
                "target with the source's config."
            )
    for t, value in plan:
        # A variable's value copied one at a time: on JAX assigning it shares
        # its buffer, which a later `fit` of either model deletes (donates).
        t.assign(keras.ops.copy(value) if isinstance(value, keras.Variable) else value)
    return extended_from


def _longer_position_table(source_variable, target_variable) -> bool:
    s, t = source_variable, target_variable
    return (
        s.path.endswith(POSITION_TABLE)
        and t.path.endswith(POSITION_TABLE)
        and len(s.shape) == len(t.shape) == 2
        and s.shape[1] == t.shape[1]
        and s.shape[0] < t.shape[0]
    )


def with_positions(backbone, sequence_length):
    """`backbone`, or a copy with `sequence_length` positions when it has fewer.

    A model pretrained on short sequences (`albert-keras pretrain` keeps 128
    positions at 128 tokens or less) fine-tunes on longer ones: its position
    table is tiled into the longer one (`copy_weights`), and the run says so.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> short = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> with_positions(short, 64) is short
    True
    """
    have = backbone.config.max_position_embeddings
    if sequence_length <= have:
        return backbone
    longer = _rebuilt(
        backbone, backbone.config.replace(max_position_embeddings=sequence_length)
    )
    print(
        f"The model has {have} positions: sequence_length={sequence_length} "
        f"extends its table, positions {have}-{sequence_length - 1} starting as "
        "copies of the first ones (fine-tuning trains them).",
        flush=True,
    )
    return longer


def with_dropout(backbone, rate):
    """`backbone`, or a copy whose encoder drops out at `rate` instead.

    A model fine-tunes with other dropout than it was pretrained with, e.g.
    a v2 release (no dropout) with the v1 releases' 0.1: the copy is built
    from `backbone`'s config with `hidden_dropout_prob` and
    `attention_probs_dropout_prob` set to `rate`, and given its weights
    (`copy_weights`; dropout holds none), so it computes the same outputs
    when not training.

    Args:
        backbone: an `AlbertBackbone`.
        rate: float in [0, 1), or None to keep the backbone's own.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> plain = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> with_dropout(plain, 0.1).config.attention_probs_dropout_prob
    0.1
    >>> with_dropout(plain, None) is plain
    True
    """
    config = backbone.config
    own = (config.hidden_dropout_prob, config.attention_probs_dropout_prob)
    if rate is None or own == (rate, rate):
        return backbone
    return _rebuilt(
        backbone,
        config.replace(hidden_dropout_prob=rate, attention_probs_dropout_prob=rate),
    )


def with_gradient_checkpointing(backbone):
    """A copy of `backbone` that recomputes its blocks in the backward pass.

    The copy is built under `gradient_checkpointing` (a `keras.RematScope`)
    and given `backbone`'s weights, so it computes the same numbers, training
    too, while keeping only each block's input for the backward pass: what
    lets a large model fine-tune on long sequences or big batches in less
    memory, for about a third more compute. The saved model does not keep the
    recomputation (it changes no number); apply it again to train further.

    Args:
        backbone: an `AlbertBackbone`.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> plain = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> with_gradient_checkpointing(plain).config == plain.config
    True
    """
    from albert_keras.models.gradient_checkpointing import gradient_checkpointing

    with gradient_checkpointing(backbone.config):
        return _rebuilt(backbone, backbone.config)


def _rebuilt(backbone, config):
    """A new `AlbertBackbone` of `config` with `backbone`'s dtype, int8 layers
    (an int8 --init), weights and, where it has as many, dropout seeds (so
    it draws the same dropout masks)."""
    from albert_keras.layers.albert_dropout import dropout_states
    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.models.quantized_layers import (
        quantize_again,
        quantized_layer_modes,
    )

    copy = AlbertBackbone(config, dtype=backbone.dtype_policy.name)
    quantize_again(copy, quantized_layer_modes(backbone))
    copy_weights(backbone, copy)
    theirs, ours = dropout_states(backbone), dropout_states(copy)
    if len(theirs) == len(ours):
        for source, target in zip(theirs, ours, strict=True):
            target.assign(keras.ops.copy(source.value))
    return copy


def set_head_dropout(model, rate) -> float:
    """Sets the dropout before a task model's head to `rate`, in place.

    Call it before the model first trains (a compiled training step keeps
    the rate it was traced with). The model's config (`dropout`) says the
    new rate, so a saved model keeps it.

    Args:
        model: an `AlbertClassifier`, `AlbertMultipleChoice` or
            `AlbertTokenClassifier` (the SQuAD heads have no dropout).
        rate: float in [0, 1).

    Returns:
        The rate the head had.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    >>> config = AlbertConfig.from_preset("albert_tiny")
    >>> classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    >>> set_head_dropout(classifier, 0.3), classifier.get_config()["dropout"]
    (0.1, 0.3)
    """
    layer = getattr(model, "output_dropout", None)
    if layer is None:
        raise ValueError(
            f"{type(model).__name__} has no dropout before its head (the SQuAD "
            "heads have none, as the official ones): leave the head's dropout "
            "out, or set the encoder's (`dropout`)."
        )
    if rate > 0 and getattr(layer, "seed_generator", None) is None:
        # Keras's Dropout makes its random generator only for a rate above 0,
        # and a built layer takes no new state.
        raise ValueError(
            f"This {type(model).__name__} was built without head dropout: build "
            f"it with dropout={rate} instead (e.g. AlbertClassifier(backbone, "
            f"num_classes, dropout={rate}))."
        )
    own, layer.rate, model.dropout = layer.rate, float(rate), float(rate)
    return own


def reuse_task_head(model, loaded) -> str:
    """Starts `model` from the whole loaded task model when it is the same.

    A model of the same class with weights of the same shapes (a longer
    position table allowed) gives its head too; anything else (a pretrainer,
    a classifier with other labels) gives only its backbone, which
    `load_backbone` took.

    Returns: a phrase saying which.
    """
    if len(model.weights) == len(model.backbone.weights):  # a bi-encoder
        return f"backbone reused ({type(model).__name__} has no head)"
    sigmoid = getattr(loaded, "multi_label", False)
    if sigmoid != getattr(model, "multi_label", False):
        kind = "a multi-label (sigmoid)" if sigmoid else "a single-label (softmax)"
        return f"backbone reused, new head: the loaded head is {kind} one"
    if type(loaded) is type(model):
        try:
            copy_weights(loaded, model)
            return f"the whole {type(model).__name__} reused, head included"
        except ValueError:  # another head (e.g. other labels): nothing assigned
            pass
    return f"backbone reused, new {type(model).__name__} head"
