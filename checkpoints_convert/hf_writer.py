"""`save_hf_checkpoint`: a Keras model as a Hugging Face transformers ALBERT folder."""

from __future__ import annotations

import json
import os

import numpy as np

from albert_keras.atomic_files import atomic_write, make_folder
from albert_keras.tokenizers.vocabulary_files import WORDPIECE_SPECIALS
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_checkpoint_reader import HF_CONFIG_FILE, SAFETENSORS
from checkpoints_convert.hf_names import HF_WITHOUT_POOLER, hf_config_dict, hf_key
from checkpoints_convert.hf_sentencepiece_files import (
    HF_TOKENIZER_CONFIG,
    cased,
    write_hf_sentencepiece,
)
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import (
    backbone_of,
    model_heads,
    official_weights,
)
from checkpoints_convert.safetensors_file import SafetensorsFile
from checkpoints_convert.written_files import refuse_another_checkpoint

_TOKEN = "AlbertForTokenClassification"
# Our head parts -> the transformers class with the same head.
_ARCHITECTURES = {
    (): "AlbertModel",
    ("mlm", "sop"): "AlbertForPreTraining",
    ("classifier",): "AlbertForSequenceClassification",
    ("span_qa",): "AlbertForQuestionAnswering",
    ("multiple_choice",): "AlbertForMultipleChoice",
    ("token_classifier",): "AlbertForTokenClassification",
}


def save_hf_checkpoint(model, folder, vocab=None, lowercase=None, labels=None) -> str:
    """Writes a model as a transformers ALBERT folder (`from_pretrained` reads it).

    `model.safetensors` holds the backbone and head under transformers' names
    (`nn.Linear` weights [out, in]), in float32; `config.json` has the
    official fields with transformers' activation names (our "gelu", the
    official tanh form, is their "gelu_new"). The class follows the model:
    `AlbertBackbone` -> `AlbertModel` (keys without the `albert.` prefix, as
    its `save_pretrained` writes them), `AlbertPretrainer` ->
    `AlbertForPreTraining`, `AlbertClassifier` ->
    `AlbertForSequenceClassification` (one output: `problem_type`
    "regression"; `multi_label`: "multi_label_classification"),
    `AlbertSpanQA` -> `AlbertForQuestionAnswering`,
    `AlbertMultipleChoice` -> `AlbertForMultipleChoice`,
    `AlbertTokenClassifier` -> `AlbertForTokenClassification`. transformers'
    question-answering and token classes have no pooler, so those models'
    is not written (their heads do not read it). The official SQuAD
    v2 head has no transformers class and raises `ConversionError`.
    Reading the folder back with `load_official_checkpoint` gives identical
    weights. The vocabulary goes where `AutoTokenizer.from_pretrained` finds
    it (`write_hf_vocabulary`).

    Args:
        model: `AlbertBackbone` or a task model (sharing "all" or "none").
        folder: created if needed; the tokenizer or weight files of an
            earlier conversion there that this one does not write again are
            removed (transformers would load them with the new weights). A
            folder holding an official or keras-hub checkpoint is refused.
        vocab: optional SentencePiece model (written as `spiece.model` with
            the `tokenizer.json` that gives our ids) or WordPiece `vocab.txt`
            (written as `vocab.txt` with a `BertTokenizer` config).
        lowercase: the tokenizer's `do_lower_case`; default: as the
            vocabulary was made (see `write_hf_vocabulary`).
        labels: a classifier's label of each logit, in order (a fine-tuning
            run's `settings.json` has them), written as `id2label` /
            `label2id`; default `LABEL_0`, `LABEL_1`, ...

    Returns:
        The folder.

    Example:
    >>> import tempfile
    >>> from albert_keras import AlbertBackbone
    >>> folder = save_hf_checkpoint(AlbertBackbone("albert_tiny"), tempfile.mkdtemp())
    >>> sorted(os.listdir(folder))
    ['config.json', 'model.safetensors']
    """
    folder = os.fspath(folder)
    backbone = backbone_of(model, "save_hf_checkpoint")
    heads = model_heads(model)
    if heads not in _ARCHITECTURES:
        raise ConversionError(
            f"{type(model).__name__} has no transformers counterpart (the "
            "official SQuAD v2 head is not in transformers); save it as .keras "
            "or with save_official_checkpoint."
        )
    refuse_another_checkpoint(folder, "transformers")
    architecture = _ARCHITECTURES[heads]
    tensors = {}
    for entry in official_weights(model):
        if entry.row.part == "pooler" and architecture in HF_WITHOUT_POOLER:
            continue  # transformers builds this class without the pooler
        value = np.asarray(entry.variable.numpy(), dtype=np.float32)
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)  # Keras -> official
        key, transform = hf_key(entry.name)
        if transform is TRANSPOSE:
            value = TRANSPOSE(value)  # official -> transformers
        if architecture == "AlbertModel":
            key = key.removeprefix("albert.")
        tensors[key] = value
    config = hf_config_dict(backbone.config, architecture)
    if architecture in ("AlbertForSequenceClassification", _TOKEN):
        names = _label_names(model.num_classes, labels)
        config["id2label"] = {str(i): name for i, name in enumerate(names)}
        config["label2id"] = {name: i for i, name in enumerate(names)}
        if model.num_classes == 1 and architecture != _TOKEN:
            config["problem_type"] = "regression"
        elif getattr(model, "multi_label", False):
            config["problem_type"] = "multi_label_classification"
    elif labels is not None:
        raise ConversionError(
            f"labels name a classifier's logits; {type(model).__name__} has none."
        )
    make_folder(folder, folder)
    earlier = _earlier_files(folder)
    if vocab is not None:  # first: a vocabulary refused leaves no weights
        length = backbone.config.max_position_embeddings
        write_hf_vocabulary(folder, vocab, lowercase, length)
    SafetensorsFile.write(
        os.path.join(folder, SAFETENSORS), tensors, metadata={"format": "pt"}
    )
    with atomic_write(os.path.join(folder, HF_CONFIG_FILE)) as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    for name, stat in earlier.items():  # not written again: another model's
        if _identity(os.path.join(folder, name)) == stat:
            os.remove(os.path.join(folder, name))
    return folder


# Files of a transformers folder that an earlier conversion may have left
# and this one may not write: transformers would load them with the new
# weights (another tokenizer, other weights in pytorch_model.bin).
_STALE_CANDIDATES = (
    "spiece.model",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "pytorch_model.bin",
    "model.safetensors.index.json",
)


def _identity(path):
    """(inode, mtime) of `path`, None if absent: a rewrite changes it."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def _earlier_files(folder):
    """{name: identity} of the `_STALE_CANDIDATES` already in `folder`."""
    found = {name: _identity(os.path.join(folder, name)) for name in _STALE_CANDIDATES}
    return {name: stat for name, stat in found.items() if stat is not None}


def _label_names(num_classes, labels):
    """`id2label`'s names: `labels` as strings, one per logit, all distinct."""
    if labels is None:
        return [f"LABEL_{i}" for i in range(num_classes)]
    names = [str(label) for label in labels]
    if len(names) != num_classes or len(set(names)) != len(names):
        raise ConversionError(
            f"labels {names} do not name the classifier's {num_classes} logits "
            "one each: pass one distinct label per logit, in order."
        )
    return names


def write_hf_vocabulary(folder, vocab, lowercase=None, max_length=512) -> str:
    """Puts a vocabulary in a transformers folder; returns the file written.

    A SentencePiece model becomes `spiece.model`, with a `tokenizer.json`
    and a `tokenizer_config.json` (`PreTrainedTokenizerFast`: transformers'
    own `AlbertTokenizer` cannot give our ids) that give our tokenizer's ids,
    cased models included (`write_hf_sentencepiece`). A WordPiece
    `vocab.txt` (`albert-keras vocab --kind wordpiece`, a `*_zh` release's
    `vocab_chinese.txt`) becomes `vocab.txt`, in the ids our tokenizer gives
    (a repeated line takes no id), with a `tokenizer_config.json` naming
    `BertTokenizer`: the layout of the hub's Chinese ALBERT checkpoints,
    whose basic tokenization and WordPiece are `AlbertWordPieceTokenizer`'s.

    Args:
        folder: the transformers folder.
        vocab: path of the vocabulary; its kind is told by its content.
        lowercase: `do_lower_case` (WordPiece: with accent stripping;
            SentencePiece always strips accents). None: as the vocabulary
            was made: WordPiece False where a token other than `[...]`
            specials has an upper-case letter, else True; SentencePiece as
            `made_lowercased` tells.
        max_length: the tokenizer's `model_max_length`.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> write_hf_vocabulary("hf_folder", SPM_MODEL_PATH)  # doctest: +SKIP
    'hf_folder/spiece.model'
    """
    from albert_keras.tokenizers import AlbertWordPieceTokenizer, load_tokenizer

    try:
        tokenizer = load_tokenizer(vocab)
    except ValueError as e:
        raise ConversionError(
            f"Cannot write the vocabulary to {folder!r}: {e}"
        ) from None
    if not isinstance(tokenizer, AlbertWordPieceTokenizer):
        return write_hf_sentencepiece(folder, vocab, lowercase, max_length)
    tokenizer.save_assets(folder)  # vocab.txt
    if lowercase is None:
        lowercase = not any(cased(token) for token in tokenizer.vocabulary)
    config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(lowercase),
        "tokenize_chinese_chars": True,
        "strip_accents": None,  # as do_lower_case, as the official code
        "model_max_length": max_length,
    }
    for name, token in WORDPIECE_SPECIALS.items():
        config[f"{name}_token"] = token
    with atomic_write(os.path.join(folder, HF_TOKENIZER_CONFIG)) as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    return os.path.join(folder, "vocab.txt")
