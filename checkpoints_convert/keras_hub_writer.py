"""`save_keras_hub_preset`: a model as a keras-hub preset folder."""

from __future__ import annotations

import os

import numpy as np

from albert_keras.atomic_files import make_folder
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.keras_hub_names import (
    KERAS_HUB_TASKS,
    PROJECTION,
    keras_hub_config,
    keras_hub_names,
)
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import (
    backbone_of,
    model_heads,
    official_weights,
)


def import_keras_hub():
    """keras-hub, or a `ConversionError` that says how to install it."""
    try:
        import keras_hub
    except ImportError:
        raise ConversionError(
            "keras-hub presets need keras-hub: pip install keras-hub (0.20 or later)."
        ) from None
    return keras_hub


def hub_variable(hub_backbone, path):
    """The keras-hub variable at an attribute path (`group_0_inner_layer_0.x`)."""
    first, *rest = path.split(".")
    obj = (
        hub_backbone.get_layer(first)
        if first.startswith("group_")
        else getattr(hub_backbone, first)
    )
    for part in rest:
        obj = getattr(obj, part)
    return obj


def to_keras_hub_backbone(model, dtype=None):
    """A `keras_hub.models.AlbertBackbone` holding the weights of our model.

    Args:
        model: `AlbertBackbone` or a task model (its backbone is taken).
        dtype: dtype policy of the keras-hub model (default: float32).

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> ours = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> to_keras_hub_backbone(ours).num_layers  # doctest: +SKIP
    2
    """
    keras_hub = import_keras_hub()
    backbone = backbone_of(model, "save_keras_hub_preset")
    config = backbone.config
    try:
        arguments = keras_hub_config(config)
    except ValueError as e:
        raise ConversionError(str(e)) from None
    hub = keras_hub.models.AlbertBackbone(**arguments, dtype=dtype)
    official = {}
    for entry in official_weights(backbone):
        value = np.asarray(entry.variable.numpy(), dtype=np.float32)
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)  # Keras -> official
        official[entry.name] = value
    if config.embedding_size == config.hidden_size:
        # The official model has no projection when E == H; keras-hub always
        # has one: the identity keeps the outputs.
        official[PROJECTION + "kernel"] = np.eye(config.hidden_size, dtype="float32")
        official[PROJECTION + "bias"] = np.zeros(config.hidden_size, "float32")
    groups, inner = arguments["num_groups"], arguments["num_inner_repetitions"]
    for name, path in keras_hub_names(groups, inner):
        variable = hub_variable(hub, path)
        variable.assign(np.reshape(official.pop(name), variable.shape))
    if official:
        raise ConversionError(
            f"No keras-hub weight for {sorted(official)}; the keras-hub name "
            "table (checkpoints_convert/keras_hub_names.py) lacks them."
        )
    return hub


def _official_values(model, part):
    """{official name: value in the official layout} of one part of `model`."""
    values = {}
    for entry in official_weights(model):
        if entry.row.part == part:
            value = np.asarray(entry.variable.numpy(), dtype=np.float32)
            if entry.row.transform is TRANSPOSE:
                value = TRANSPOSE(value)
            values[entry.name] = value
    return values


def to_keras_hub_task(model, hub, vocab=None):
    """The keras-hub task of our classifier (`AlbertTextClassifier`, with a
    preprocessor when `vocab` is given), or None for other models."""
    heads = model_heads(model)
    if len(heads) != 1 or heads[0] not in KERAS_HUB_TASKS:
        return None
    keras_hub = import_keras_hub()
    class_name, rows = KERAS_HUB_TASKS[heads[0]]
    preprocessor = None
    if vocab is not None:
        preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
            tokenizer=keras_hub.models.AlbertTokenizer(proto=os.fspath(vocab)),
            sequence_length=hub.max_sequence_length,
        )
    task = getattr(keras_hub.models, class_name)(
        hub,
        num_classes=model.num_classes,
        preprocessor=preprocessor,
        dropout=model.dropout,
        # keras-hub's multi-label head: a sigmoid on its outputs.
        activation="sigmoid" if getattr(model, "multi_label", False) else None,
    )
    values = _official_values(model, heads[0])
    for name, path, transposed in rows:
        value = TRANSPOSE(values[name]) if transposed else values[name]
        hub_variable(task, path).assign(value)
    return task


def dropped_heads(model) -> str:
    """The heads of `model` a keras-hub preset leaves out ("mlm, sop" for a
    pretrainer), or "" when it keeps them all (a backbone, a classifier)."""
    heads = model_heads(model)
    if len(heads) == 1 and heads[0] in KERAS_HUB_TASKS:
        return ""
    return ", ".join(heads)


def save_keras_hub_preset(model, folder, vocab=None, dtype=None) -> str:
    """Writes a model as a keras-hub preset folder, with its tokenizer.

    keras-hub's own `save_to_preset` writes the folder (`config.json`,
    `model.weights.h5`, `metadata.json`; with `vocab` also `tokenizer.json`
    and `assets/tokenizer/vocabulary.spm`), so
    `keras_hub.models.AlbertBackbone.from_preset(folder)` and
    `keras_hub.models.AlbertTokenizer.from_preset(folder)` read it. A
    classifier is written as keras-hub's `AlbertTextClassifier` too
    (`task.json`, `task.weights.h5`, `preprocessor.json`;
    `keras_hub.models.TextClassifier.from_preset` reads it); other task
    models as their backbone only, with a `UserWarning` naming the heads left
    out (keras-hub's MLM head is not the official one: LayerNorm epsilon
    1e-5, the official 1e-12).
    The folder appears whole or not at all (written beside, then renamed).

    Configs keras-hub cannot represent raise `ConversionError` naming the
    field: an activation other than the tanh GELU, `sharing` "attention" or
    "ffn", groups that do not divide the layers, two dropout rates.

    keras-hub's `AlbertTokenizer` runs SentencePiece on the raw text and has
    no option to do the official `preprocess_text` first: it keeps accents
    ("é" is not "e"), and it does not lowercase, where a lowercased model (the
    releases) needs it. Its ids equal ours only on text that step leaves as
    it is, so with `vocab` a `UserWarning` says so; feed it
    `albert_keras.tokenizers.sentencepiece_text.preprocess_text(text,
    lowercase)` for our ids.

    Args:
        model: `AlbertBackbone` or a task model over one.
        folder: the preset folder; an earlier preset there is replaced, a
            folder holding other files (a run's best.keras...) is refused.
        vocab: optional SentencePiece model (path) for the tokenizer; a
            WordPiece vocabulary is refused (keras-hub has no such tokenizer).
        dtype: dtype policy of the saved model (default: float32).

    Returns:
        The folder.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> model = AlbertBackbone(AlbertConfig.from_preset("albert_tiny"))
    >>> save_keras_hub_preset(model, "tiny_preset")  # doctest: +SKIP
    'tiny_preset'
    """
    from albert_keras.atomic_files import save_atomically

    folder = os.fspath(folder)
    _refuse_other_files(folder)
    hub = to_keras_hub_backbone(model, dtype=dtype)
    if vocab is not None:
        _check_sentencepiece(vocab, hub.vocabulary_size)
        _warn_tokenizer_differs(vocab)
    task = to_keras_hub_task(model, hub, vocab)
    tokenizer = None
    if vocab is not None and task is None:
        tokenizer = import_keras_hub().models.AlbertTokenizer(proto=os.fspath(vocab))

    def save(temporary):
        (task or hub).save_to_preset(temporary)
        if tokenizer is not None:
            tokenizer.save_to_preset(temporary)

    make_folder(os.path.dirname(os.path.abspath(folder)), folder)
    written = save_atomically(folder, save)
    if dropped := dropped_heads(model):
        import warnings

        warnings.warn(
            f"not in the keras-hub preset (a backbone): the {dropped} head(s); "
            "keras-hub has no such task, and a model loaded from the preset "
            "starts them fresh",
            stacklevel=2,
        )
    return written


# What keras-hub's `save_to_preset` writes in a preset folder.
PRESET_ENTRIES = {
    "assets",
    "config.json",
    "metadata.json",
    "preprocessor.json",
    "task.json",
    "tokenizer.json",
}


def _refuse_other_files(folder):
    """The preset replaces `folder` whole: one holding anything but an earlier
    preset (a fine-tuning run, the very .keras being converted) would be
    deleted with it.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, "best.keras"), "w").close()
    >>> try:
    ...     _refuse_other_files(folder)
    ... except ConversionError as e:
    ...     print("best.keras" in str(e))
    True
    """
    if not os.path.isdir(folder):
        return
    others = sorted(
        name
        for name in os.listdir(folder)
        if name not in PRESET_ENTRIES
        and not (name.endswith(".weights.h5") or name.endswith(".weights.json"))
    )
    if others:
        raise ConversionError(
            f"The output folder {folder!r} holds files that are not a keras-hub "
            f"preset's ({', '.join(others[:5])}{', ...' if len(others) > 5 else ''}"
            "): writing the preset replaces the whole folder, which would "
            "delete them. Give a new or empty folder as the output."
        )


def _check_sentencepiece(vocab, vocab_size):
    """keras-hub's ALBERT tokenizer is SentencePiece only: a WordPiece
    vocabulary (the *_zh models) was a sentencepiece parse error. Its ids
    must fit the model's `vocab_size` embeddings."""
    from albert_keras.tokenizers.vocabulary_files import read_sentencepiece_model

    if not os.path.isfile(vocab):
        raise ConversionError(
            f"The vocabulary {os.fspath(vocab)!r} does not exist: pass the "
            "model's SentencePiece model (e.g. 30k-clean.model)."
        )
    try:
        _, processor = read_sentencepiece_model(os.fspath(vocab))
    except ValueError as e:
        raise ConversionError(
            f"keras-hub's AlbertTokenizer reads SentencePiece models only: {e} "
            "A WordPiece vocab.txt (the *_zh models) has no keras-hub "
            "tokenizer: leave the vocabulary out to write the backbone alone."
        ) from None
    if processor.get_piece_size() > vocab_size:
        raise ConversionError(
            f"The tokenizer {os.fspath(vocab)!r} has {processor.get_piece_size()} "
            f"tokens but the model embeds {vocab_size}: its ids would fall "
            "outside the embeddings. Pass the vocabulary the model was "
            "pretrained with (or leave it out to write the backbone alone)."
        )


def _warn_tokenizer_differs(vocab):
    """The `UserWarning` of `save_keras_hub_preset`: keras-hub's tokenizer
    skips the official preprocessing."""
    import warnings

    from checkpoints_convert.hf_sentencepiece_files import vocabulary_lowercase

    lowercase = vocabulary_lowercase(vocab)
    skipped = "lowercase or drop accents" if lowercase else "drop accents"
    warnings.warn(
        f"keras-hub's AlbertTokenizer does not {skipped} as albert_keras's "
        f"tokenizer does for {os.fspath(vocab)!r} (keras-hub has no such "
        "option), so text with "
        f"{'capitals or ' if lowercase else ''}accents gets other ids there. "
        "For equal ids, pass keras-hub's tokenizer albert_keras.tokenizers."
        f"sentencepiece_text.preprocess_text(text, {lowercase}) instead of text.",
        stacklevel=3,
    )
