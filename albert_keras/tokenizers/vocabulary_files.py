"""Reading and checking ALBERT vocabulary files; `load_tokenizer` picks the kind.

Two kinds exist: a SentencePiece model (`30k-clean.model`, the English
releases) and a WordPiece `vocab.txt` (`vocab_chinese.txt`, the `*_zh`
releases). A wrong or damaged file is refused here with what was found and
what to do, before any TensorFlow op sees it.
"""

from __future__ import annotations

import glob
import os

# The official layout of a SentencePiece vocabulary (`30k-clean.model`).
SENTENCEPIECE_SPECIALS = {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]"}
SENTENCEPIECE_SPECIALS.update({"sep": "[SEP]", "mask": "[MASK]"})
# And of a WordPiece one (BERT's; `vocab_chinese.txt`).
WORDPIECE_SPECIALS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]"}
WORDPIECE_SPECIALS.update({"sep": "[SEP]", "mask": "[MASK]"})
_FIX = "Use the release's file or make one with `albert-keras vocab`."
# Vocabulary files looked for beside a model or checkpoint, in this order:
# ours (`albert-keras pretrain`), the official releases', transformers' and
# keras-hub's names, then WordPiece ones.
VOCABULARY_NAMES = (
    "vocab.model",
    "30k-clean.model",
    "spiece.model",
    "assets/tokenizer/vocabulary.spm",
    "vocab.txt",
    "vocab_chinese.txt",
)


def _read_bytes(path, what: str) -> bytes:
    if isinstance(path, (str, os.PathLike)) and os.path.isdir(path):
        found = vocabulary_beside(path)
        hint = f" (such as {found!r})" if found else ""
        raise ValueError(
            f"The {what} {str(path)!r} is a folder; pass the vocabulary file in "
            f"it{hint}: a SentencePiece .model or a WordPiece vocab.txt."
        )
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(
            f"Cannot read the {what} {str(path)!r}: {e.strerror}."
        ) from None


def read_sentencepiece_model(model) -> tuple[bytes, object]:
    """Loads and checks a SentencePiece model for ALBERT.

    Args:
        model: path of a `.model` file, or its bytes.

    Returns: `(serialized model, sentencepiece.SentencePieceProcessor)`.

    Raises:
        ValueError: unreadable, not a SentencePiece model, not a unigram
            model, without `[CLS]`, `[SEP]` and `[MASK]`, or without `<pad>`
            at id 0 (ids are padded with 0).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> proto, processor = read_sentencepiece_model(SPM_MODEL_PATH)
    >>> processor.piece_to_id("[CLS]")
    2
    """
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    name = "SentencePiece model"
    if isinstance(model, (str, os.PathLike)):
        name = f"SentencePiece model {str(model)!r}"
        model = _read_bytes(model, "SentencePiece model")
    model = bytes(model)
    parsed = sentencepiece_model_pb2.ModelProto()
    try:
        parsed.ParseFromString(model)
        processor = spm.SentencePieceProcessor(model_proto=model)
    except Exception:  # protobuf and sentencepiece raise several kinds
        parsed = None
    if parsed is None or not parsed.pieces:
        hint = ""
        if model[:5] in (b"[PAD]", b"[UNK]") or b"\n[CLS]\n" in model[:20000]:
            hint = " It looks like a WordPiece vocab.txt: use AlbertWordPieceTokenizer."
        raise ValueError(
            f"The {name} is not a SentencePiece model ({len(model)} bytes that do "
            f"not parse as one).{hint} {_FIX}"
        )
    model_type = sentencepiece_model_pb2.TrainerSpec.ModelType.Name(
        parsed.trainer_spec.model_type
    )
    if model_type != "UNIGRAM":
        raise ValueError(
            f"The {name} is a {model_type} model; ALBERT's SentencePiece "
            f"vocabularies are UNIGRAM models, the only kind supported. {_FIX}"
        )
    missing = [
        piece
        for piece in ("[CLS]", "[SEP]", "[MASK]")
        if processor.piece_to_id(piece) == processor.unk_id()
    ]
    if missing:
        raise ValueError(
            f"The {name} lacks the ALBERT special tokens {missing} (the official "
            "layout is <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4, as control "
            f"symbols). {_FIX}"
        )
    if processor.pad_id() != 0:
        # The official code pads with id 0: it must be a padding piece, not
        # <unk> or a word that padding would then stand for.
        raise ValueError(
            f"The {name} has no <pad> at id 0 (pad_id={processor.pad_id()}, id 0 "
            f"is {processor.id_to_piece(0)!r}); ALBERT pads with id 0 (the "
            "official layout is <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4). "
            "Use the release's file, or train one with `albert-keras vocab` (or "
            "spm_train --pad_id=0 --unk_id=1 ...)."
        )
    return model, processor


def read_wordpiece_vocabulary(vocabulary) -> list[str]:
    """Reads a WordPiece vocabulary as the official `load_vocab` does, and checks it.

    One token per line, the first whitespace-separated field; a repeated
    token keeps its first id and takes no new one (so ids are counted over
    distinct tokens, exactly as `load_vocab` numbers them).

    Args:
        vocabulary: path of a `vocab.txt` or a list of tokens.

    Returns: the tokens in id order.

    Raises:
        ValueError: unreadable, not UTF-8 text (for instance a SentencePiece
            model), a blank line inside, no `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`,
            `[MASK]`, or `[PAD]` not first (ids are padded with 0).

    Example:
    >>> read_wordpiece_vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])[:2]
    ['[PAD]', '[UNK]']
    """
    name = "WordPiece vocabulary"
    if isinstance(vocabulary, (str, os.PathLike)):
        name = f"WordPiece vocabulary {str(vocabulary)!r}"
        data = _read_bytes(vocabulary, "WordPiece vocabulary")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(
                f"The {name} is not UTF-8 text (byte {e.start}); a WordPiece "
                "vocabulary has one token per line. A SentencePiece .model goes "
                f"to AlbertTokenizer. {_FIX}"
            ) from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the final newline
    else:
        lines = [str(token) for token in vocabulary]
    tokens, seen = [], set()
    for number, line in enumerate(lines, start=1):
        fields = line.strip().split()
        if not fields:
            raise ValueError(
                f"Line {number} of the {name} is blank; the official load_vocab "
                f"fails on it, and ids after it would be ambiguous. {_FIX}"
            )
        if "\x00" in line:
            raise ValueError(
                f"The {name} holds NUL bytes (line {number}): it is not a text "
                f"vocabulary. A SentencePiece .model goes to AlbertTokenizer. {_FIX}"
            )
        if fields[0] not in seen:
            seen.add(fields[0])
            tokens.append(fields[0])
    needed = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    missing = [t for t in needed if t not in seen]
    if missing:
        raise ValueError(
            f"The {name} lacks the special tokens {missing}; ALBERT needs [PAD] "
            "(first), [UNK], [CLS], [SEP] and [MASK] (as the release's "
            f"vocab_chinese.txt). {_FIX}"
        )
    if tokens[0] != "[PAD]":
        # The official code pads with id 0, whatever token is there.
        raise ValueError(
            f"The {name} has {tokens[0]!r} at id 0 and [PAD] at id "
            f"{tokens.index('[PAD]')}; ALBERT pads with id 0, so [PAD] must be the "
            f"first line (as in the release's vocab_chinese.txt). {_FIX}"
        )
    return tokens


def check_vocabulary_size(model_size, vocabulary_size, fix, vocabulary=None):
    """Raises `ValueError` when a model's `vocab_size` is not its vocabulary's size.

    Args:
        model_size: int. The model config's `vocab_size`.
        vocabulary_size: int. Tokens in the vocabulary file.
        fix: str. What to do about it, the end of the message.
        vocabulary: optional path, named in the message.

    Example:
    >>> check_vocabulary_size(8000, 8000, "pass the right --vocab.")
    """
    if model_size != vocabulary_size:
        name = f" {vocabulary!r}" if vocabulary else ""
        raise ValueError(
            f"The model has vocab_size={model_size} but the vocabulary{name} has "
            f"{vocabulary_size} tokens: {fix}"
        )


def load_tokenizer(vocabulary: str, lowercase: bool = True, **kwargs):
    """The right tokenizer for a vocabulary file, by its content.

    Args:
        vocabulary: a SentencePiece `.model` (-> `AlbertTokenizer`) or a
            WordPiece `vocab.txt` (-> `AlbertWordPieceTokenizer`).
        lowercase: as the official `do_lower_case` (True for every release).
        **kwargs: passed to the layer (`name`, ...).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> type(load_tokenizer(SPM_MODEL_PATH)).__name__
    'AlbertTokenizer'
    """
    from albert_keras.tokenizers.albert_tokenizer import AlbertTokenizer
    from albert_keras.tokenizers.albert_wordpiece_tokenizer import (
        AlbertWordPieceTokenizer,
    )

    if _is_text_file(vocabulary):
        return AlbertWordPieceTokenizer(vocabulary, lowercase=lowercase, **kwargs)
    return AlbertTokenizer(vocabulary, lowercase=lowercase, **kwargs)


def _is_text_file(vocabulary) -> bool:
    """A WordPiece `vocab.txt` (text), not a SentencePiece model (binary)."""
    head = _read_bytes(vocabulary, "vocabulary")[:4096]
    try:
        head.decode("utf-8")
        return b"\x00" not in head
    except UnicodeDecodeError as e:
        # A cut in the middle of a character at the end is still text.
        return e.start > len(head) - 4 and b"\x00" not in head


def _folder_of(path) -> str:
    path = os.fspath(path)
    return path if os.path.isdir(path) else os.path.dirname(path) or "."


# A vocabulary kept beside a model file `X.keras`: `X.model` (SentencePiece)
# or `X.vocab.txt` (WordPiece), looked for before the names above.
BESIDE_SUFFIXES = (".model", ".vocab.txt")


def vocabulary_path_beside(model_path, vocabulary) -> str:
    """Where `vocabulary` is kept beside the model file `model_path`.

    Example:
    >>> vocabulary_path_beside("cache/albert_base_v2.keras", "x/30k-clean.model")
    'cache/albert_base_v2.model'
    """
    suffix = BESIDE_SUFFIXES[1] if vocabulary.endswith(".txt") else BESIDE_SUFFIXES[0]
    return os.path.splitext(model_path)[0] + suffix


def vocabulary_files_of(path) -> list[str]:
    """The names a vocabulary beside `path` may have, in the order looked for.

    For a file `X.keras`: `X.model` and `X.vocab.txt` (what `albert-convert`
    writes beside it) come first. Then `VOCABULARY_NAMES` in its folder and
    in the folder's `assets/` (TF1 Hub modules).
    """
    path = os.fspath(path)
    folder = _folder_of(path)
    names = []
    if os.path.isfile(path):
        stem = os.path.splitext(path)[0]
        names += [stem + suffix for suffix in BESIDE_SUFFIXES]
    for name in VOCABULARY_NAMES:
        names += [os.path.join(folder, name), os.path.join(folder, "assets", name)]
    return names


def vocabulary_beside(path) -> str | None:
    """The vocabulary file kept beside a model or checkpoint, or None.

    The first of `vocabulary_files_of(path)` that exists, else the first
    `*.model` of the folder (a SentencePiece model under its own name).

    Args:
        path: a model file (`.keras`, a checkpoint prefix) or a folder.

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> vocabulary_beside(SPM_MODEL_PATH) == SPM_MODEL_PATH  # the only .model
    True
    """
    for candidate in vocabulary_files_of(path):
        if os.path.isfile(candidate):
            return candidate
    found = sorted(glob.glob(os.path.join(_folder_of(path), "*.model")))
    return found[0] if found else None


def vocabulary_tokens(vocabulary) -> list[str]:
    """The tokens of a vocabulary file, by id (either kind).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> vocabulary_tokens(SPM_MODEL_PATH)[:3]
    ['<pad>', '<unk>', '[CLS]']
    """
    if _is_text_file(vocabulary):
        return read_wordpiece_vocabulary(vocabulary)
    _, processor = read_sentencepiece_model(vocabulary)
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


def check_same_vocabulary(vocabulary, model_path) -> None:
    """Refuses an explicit `vocabulary` of as many tokens as the one kept
    beside `model_path` but other tokens (the model's token ids are the
    latter's; the size checks against the model pass, and the ids would read
    as garbage). Other sizes are left to those checks.

    Nothing is checked when no vocabulary is kept there, or when
    `vocabulary` is in the model's own folder (picked among its files).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> check_same_vocabulary(SPM_MODEL_PATH, SPM_MODEL_PATH)
    """
    beside = vocabulary_beside(model_path) if os.path.exists(model_path) else None
    if beside is None or _folder_of(vocabulary) == _folder_of(beside):
        return
    given, kept = vocabulary_tokens(vocabulary), vocabulary_tokens(beside)
    if given == kept or len(given) != len(kept):
        return  # another size: the size checks name it against the model
    differ = next(i for i, (a, b) in enumerate(zip(given, kept, strict=True)) if a != b)
    raise ValueError(
        f"The vocabulary {str(vocabulary)!r} ({len(given)} tokens) is not the "
        f"one kept beside the model, {beside!r} (as many tokens, but they first "
        f"differ at id {differ}: {given[differ]!r} vs {kept[differ]!r}): the "
        "model's token ids are the latter's. Leave --vocab out to use it, or "
        "replace that file if it is the wrong one."
    )


def wordpiece_reserved_tokens(unused_tokens: int = 99) -> list[str]:
    """BERT's layout: `[PAD]`, `[unused1..N]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`.

    With the default 99 unused slots the ids are those of the release's
    `vocab_chinese.txt`: [PAD]=0, [UNK]=100, [CLS]=101, [SEP]=102, [MASK]=103.
    """
    if isinstance(unused_tokens, bool) or not isinstance(unused_tokens, int):
        raise ValueError(f"`unused_tokens` must be an int. Received: {unused_tokens!r}")
    if unused_tokens < 0:
        raise ValueError(
            f"--unused {unused_tokens}: the [unusedN] slots cannot be negative; "
            "give 0 or more (99, the release's, gives [UNK]=100)."
        )
    unused = [f"[unused{i}]" for i in range(1, unused_tokens + 1)]
    return ["[PAD]", *unused, "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
