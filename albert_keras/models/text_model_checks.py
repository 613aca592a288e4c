"""The text models' checks: backend, tokenizer and length, string inputs."""

from __future__ import annotations

import keras


def check_backend():
    """ValueError on JAX and torch: the tokenizer and packer are TensorFlow
    ops, which only the TensorFlow backend runs inside a Keras model."""
    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise ValueError(
            "A text model (with_tokenizer, AlbertTextModel) runs on the "
            "TensorFlow backend only: its tokenizer and packer are TensorFlow "
            f"ops. The Keras backend is {backend}. Run it with "
            "KERAS_BACKEND=tensorflow (a .keras saved here loads there), or on "
            f"{backend} tokenize with the tokenizer and AlbertPacker and call "
            "the task model on token_ids, segment_ids and padding_mask."
        )


def check_fit(task_model, tokenizer, sequence_length):
    """Ids and lengths the task model cannot take fail here, not at serving time."""
    check_backend()
    if not callable(getattr(tokenizer, "vocabulary_size", None)) or not hasattr(
        tokenizer, "special_token_ids"
    ):
        hub = type(tokenizer).__module__.startswith("keras_hub")
        raise TypeError(
            "`tokenizer` must be an AlbertTokenizer or AlbertWordPieceTokenizer "
            "(`with_tokenizer` also takes the path of its vocabulary file). "
            f"Received: {tokenizer!r}"
            + (
                ". keras-hub's tokenizers skip the official preprocessing "
                "(lowercasing, accents: docs/keras-hub.md): pass its "
                "SentencePiece file instead (a keras-hub preset keeps it as "
                "assets/tokenizer/vocabulary.spm)."
                if hub
                else ""
            )
        )
    config = getattr(getattr(task_model, "backbone", task_model), "config", None)
    if config is None or not isinstance(sequence_length, int):
        return  # the packer names a sequence_length that is not an int
    if tokenizer.vocabulary_size() > config.vocab_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size()} tokens but the model "
            f"embeds {config.vocab_size}: use the model's own vocabulary (or a "
            "model with vocab_size >= the tokenizer's)."
        )
    if sequence_length > config.max_position_embeddings:
        raise ValueError(
            f"`sequence_length` must be at most the model's max_position_embeddings"
            f"={config.max_position_embeddings}. Received: {sequence_length}"
        )


def check_strings(value, where=()):
    """ValueError naming the first item of nested lists that is no text."""
    if isinstance(value, (str, bytes)):
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_strings(item, (*where, i))
        return
    index = "".join(f"[{i}]" for i in where)
    raise ValueError(
        f"A text model takes strings (str or bytes); item {index} is "
        f"{type(value).__name__} {value!r}. Convert it (str(x)) or leave the "
        'record out (an empty string "" is a text with no tokens).'
    )
