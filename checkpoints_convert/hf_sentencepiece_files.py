"""A SentencePiece model as transformers tokenizer files that give our ids.

`write_hf_sentencepiece` puts `spiece.model`, `tokenizer_config.json` and
`tokenizer.json` in a transformers folder; `vocabulary_lowercase` tells how a
vocabulary lowercases (a folder's `tokenizer_config.json`, else its pieces).
"""

from __future__ import annotations

import base64
import json
import os

from albert_keras.atomic_files import atomic_write, copy_file

HF_TOKENIZER_CONFIG = "tokenizer_config.json"
HF_TOKENIZER_JSON = "tokenizer.json"
SPIECE = "spiece.model"
_SPECIAL = {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]", "sep": "[SEP]"}
_SPECIAL.update(mask="[MASK]", bos="[CLS]", eos="[SEP]")


def cased(token) -> bool:
    """Whether a vocabulary token holds an upper-case letter (`[...]` apart)."""
    special = token.startswith("[") and token.endswith("]")
    return not special and token != token.lower()


def made_lowercased(pieces) -> bool:
    """Whether SentencePiece pieces come from lowercased text.

    A model made lowercased has no piece with an upper-case letter, one made
    cased many (a tenth of an English model's); fewer than 1% are taken as
    strays of a lowercased model (a character whose NFKC is upper case).
    """
    pieces = list(pieces)
    return sum(cased(p) for p in pieces) < 0.01 * len(pieces)


def vocabulary_lowercase(vocab) -> bool:
    """How text is lowercased for a vocabulary (the official `do_lower_case`).

    The `do_lower_case` of a `tokenizer_config.json` beside it (a
    transformers folder) where there is one; else, for a SentencePiece
    model, as it was made (`made_lowercased`); else True, the official
    default (every release is lowercased).

    Args:
        vocab: a SentencePiece model or a WordPiece `vocab.txt`.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> vocabulary_lowercase(SPM_MODEL_PATH)
    True
    """
    from albert_keras.tokenizers import AlbertTokenizer, load_tokenizer

    config = os.path.join(os.path.dirname(os.fspath(vocab)), HF_TOKENIZER_CONFIG)
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as f:
            told = json.load(f).get("do_lower_case")
        if isinstance(told, bool):
            return told
    tokenizer = load_tokenizer(vocab)
    if isinstance(tokenizer, AlbertTokenizer):
        return made_lowercased(tokenizer.get_vocabulary())
    return True


def write_hf_sentencepiece(folder, vocab, lowercase=None, max_length=512) -> str:
    """Writes a SentencePiece model as transformers tokenizer files.

    `spiece.model` is the model itself. `tokenizer.json` spells out our
    tokenization for the `tokenizers` library: NFKD, accents dropped,
    lowercasing where asked, the model's own normalization, whitespace
    split, then unigram pieces with the scores the `sentencepiece` package
    searches with. `tokenizer_config.json` names `PreTrainedTokenizerFast`,
    so `AutoTokenizer.from_pretrained` takes `tokenizer.json` as written
    (also records `do_lower_case`, `keep_accents` False, `remove_space`).
    transformers' own `AlbertTokenizer` cannot give our ids: it rebuilds
    that pipeline from `spiece.model` and always rewrites `` and '' to '"'
    (the official release does not); without a config it lowercases cased
    models too; and it makes ALBERT's user-defined pieces ("(", ".", ...)
    added tokens, losing the "▁" before them.

    One official rule has no `tokenizer.json` form: a piece ending in a
    digit and "," is encoded again as the stem and ",". A model with such
    pieces gets the files and a `UserWarning` naming them.

    Args:
        folder: the transformers folder.
        vocab: path of the SentencePiece model.
        lowercase: `do_lower_case`; None: as the model was made
            (`made_lowercased`).
        max_length: the tokenizer's `model_max_length`.

    Returns: the path of `spiece.model`.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> write_hf_sentencepiece("hf_folder", SPM_MODEL_PATH)  # doctest: +SKIP
    'hf_folder/spiece.model'
    """
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    from albert_keras.tokenizers.albert_tokenizer import _as_scored

    with open(vocab, "rb") as f:
        model = model_pb2.ModelProto.FromString(_as_scored(f.read()))
    pieces = [p.piece for p in model.pieces]
    if lowercase is None:
        lowercase = made_lowercased(pieces)
    split = [p for p in pieces if len(p) > 1 and p[-1] == "," and p[-2].isdigit()]
    if split:
        import warnings

        warnings.warn(
            f"{len(split)} pieces of {os.fspath(vocab)!r} end in a digit and "
            f"',' ({split[:3]}...): albert_keras re-encodes them as the stem "
            "and ',' (the official rule), transformers' fast tokenizer keeps "
            "them whole, so text with them gets other ids there.",
            stacklevel=2,
        )
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",  # takes tokenizer.json as is
        "do_lower_case": bool(lowercase),
        "keep_accents": False,
        "remove_space": True,
        "model_max_length": max_length,
        **{f"{name}_token": token for name, token in _SPECIAL.items()},
    }
    target = os.path.join(folder, SPIECE)
    copy_file(os.fspath(vocab), target)
    _write_json(os.path.join(folder, HF_TOKENIZER_CONFIG), config)
    _write_json(
        os.path.join(folder, HF_TOKENIZER_JSON), _tokenizer_json(model, lowercase)
    )
    return target


def _tokenizer_json(model, lowercase):
    """The `tokenizers` description of our SentencePiece tokenization."""
    kinds = type(model).SentencePiece
    specials = [
        (i, p.piece)
        for i, p in enumerate(model.pieces)
        if p.type in (kinds.CONTROL, kinds.UNKNOWN)
    ]
    flags = dict(single_word=False, lstrip=False, rstrip=False, normalized=False)
    normalizers = [{"type": "NFKD"}, {"type": "StripAccents"}]
    if lowercase:
        normalizers.append({"type": "Lowercase"})
    charsmap = model.normalizer_spec.precompiled_charsmap
    if charsmap:
        encoded = base64.b64encode(charsmap).decode("ascii")
        normalizers.append({"type": "Precompiled", "precompiled_charsmap": encoded})
    metaspace = {"replacement": "\u2581", "prepend_scheme": "always", "split": True}
    ids = {p.piece: i for i, p in enumerate(model.pieces)}

    def special(name, type_id):
        return {"SpecialToken": {"id": name, "type_id": type_id}}

    def sequence(name, type_id):
        return {"Sequence": {"id": name, "type_id": type_id}}

    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": piece, **flags, "special": True}
            for i, piece in specials
        ],
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "WhitespaceSplit"},
                {"type": "Metaspace", **metaspace},
            ],
        },
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)],
            "pair": [
                *[special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)],
                *[sequence("B", 1), special("[SEP]", 1)],
            ],
            "special_tokens": {
                name: {"id": name, "ids": [ids[name]], "tokens": [name]}
                for name in ("[CLS]", "[SEP]")
            },
        },
        "decoder": {"type": "Metaspace", **metaspace},
        "model": {
            "type": "Unigram",
            "unk_id": model.trainer_spec.unk_id,
            "vocab": [[p.piece, p.score] for p in model.pieces],
            "byte_fallback": False,
        },
    }


def _write_json(path, value):
    with atomic_write(path) as f:
        json.dump(value, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
