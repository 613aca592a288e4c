"""Vocabulary training: an ALBERT SentencePiece model, or a WordPiece `vocab.txt`."""

from __future__ import annotations

import collections
import glob
import gzip
import os
import sys

from albert_keras.atomic_files import atomic_write, make_folder, temporary_path
from albert_keras.tokenizers.binary_files import (
    binary_kind,
    read_head,
    undecodable_line,
)
from albert_keras.tokenizers.vocabulary_files import wordpiece_reserved_tokens

# The released 30k-clean.model's options (the ALBERT README's spm_train
# command): ids 0-4 are <pad>, <unk>, [CLS], [SEP], [MASK]; no BOS/EOS;
# a unigram model; these user-defined symbols.
OFFICIAL_OPTIONS = dict(
    pad_id=0,
    unk_id=1,
    bos_id=-1,
    eos_id=-1,
    control_symbols=["[CLS]", "[SEP]", "[MASK]"],
    user_defined_symbols=["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"],
    model_type="unigram",
    character_coverage=0.99995,
    shuffle_input_sentence=True,
    input_sentence_size=10_000_000,
)
# SentencePiece's default max_sentence_length: longer lines are skipped.
SENTENCE_BYTES = 4192


def input_paths(input_files) -> list[str]:
    """Files matching each path or glob, in the order given (sorted per glob).

    Folders a glob matches are skipped; a folder named as such is kept (and
    the reader refuses it, naming the fix).

    Args:
        input_files: a path or glob, or a list of them.

    Example:
    >>> input_paths(["corpus/*.txt", "extra.txt"])  # doctest: +SKIP
    ['corpus/a.txt', 'corpus/b.txt', 'extra.txt']
    """
    if isinstance(input_files, (str, os.PathLike)):
        input_files = [input_files]
    patterns = [str(pattern) for pattern in input_files]
    if not patterns:
        raise ValueError("No input files given. Pass text files or glob patterns.")
    paths = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern)) or (
            [pattern] if os.path.exists(pattern) else []
        )
        if glob.has_magic(pattern) and matched:  # folders a glob matches: skipped
            files = [path for path in matched if not os.path.isdir(path)]
            if not files:
                raise ValueError(
                    f"{pattern!r} matches only folders ({', '.join(matched[:3])}); "
                    "pass the text files in them (e.g. 'corpus/*/*.txt')."
                )
            matched = files
        if not matched:
            raise ValueError(
                f"No input file matches {pattern!r}. Check the path; quote globs "
                "such as 'corpus/*.txt' so the shell does not expand them."
            )
        paths.extend(matched)
    return paths


def _read_text(path: str) -> str:
    """One UTF-8 (or `.gz`) file's text, BOM dropped; a clear error otherwise."""
    try:
        if path.endswith(".gz") and read_head(path, 2) == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except (OSError, EOFError) as e:
        reason = getattr(e, "strerror", None) or e
        raise ValueError(f"Cannot read {path!r}: {reason}.") from None
    kind = binary_kind(raw[:4096])
    if kind:
        raise ValueError(
            f"{path!r} is {kind}; a vocabulary is trained on UTF-8 text files."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = undecodable_line(path, raw, e)
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}, line {line}); convert it, "
            "e.g. with iconv, before training a vocabulary."
        ) from None


def read_lines(input_files) -> list[str]:
    """Non-blank lines of UTF-8 text files (paths or globs, `.gz` too).

    Lines end at "\\n", "\\r\\n" or "\\r"; a clear error for anything
    that is not text.
    """
    paths = input_paths(input_files)
    lines = []
    for path in paths:
        text = _read_text(path).replace("\r\n", "\n").replace("\r", "\n")
        lines.extend(line for line in text.split("\n") if line.strip())
    if not lines:
        raise ValueError(f"No text in {paths}: the corpus is empty.")
    return lines


def check_line_lengths(lines, max_bytes: int = SENTENCE_BYTES) -> None:
    """Refuses text whose every line SentencePiece's trainer would skip; warns of some.

    The trainer (as `spm_train`) leaves lines over `max_bytes` UTF-8 bytes
    out: a file with no line breaks would train on nothing.
    """
    sizes = [len(line.encode("utf-8")) for line in lines]
    long = [size for size in sizes if size > max_bytes]
    if not long:
        return
    fix = "put one sentence or paragraph on a line (a blank line between documents)"
    if len(long) == len(sizes):
        raise ValueError(
            f"Every line of the text is longer than {max_bytes} bytes (the longest "
            f"{max(long)}), which SentencePiece does not train on: {fix}."
        )
    print(
        f"albert-keras: warning: {len(long)} of {len(sizes)} lines "
        f"({sum(long) / sum(sizes):.0%} of the text) are longer than {max_bytes} "
        f"bytes and left out of the vocabulary, as spm_train does; to use them, {fix}.",
        file=sys.stderr,
        flush=True,
    )


def train_sentencepiece(
    input_files,
    output_prefix: str,
    vocab_size: int = 30000,
    lowercase: bool = True,
    num_threads: int | None = None,
    **options,
) -> str:
    """Trains `output_prefix.model` (+ `.vocab`) with the official layout and options.

    Lines go through the official `preprocess_text` first (lowercased when
    `lowercase`), so the pieces are those `AlbertTokenizer` will ask for.

    Args:
        input_files: UTF-8 text files (one or a list).
        output_prefix: where the model goes (folders are created).
        vocab_size: pieces, the 5 special ones included.
        lowercase: lowercase the text (as the released English models).
        num_threads: trainer threads (default: all cores).
        **options: other `spm_train` options, or ones to override
            (`user_defined_symbols=[...]`, `input_sentence_size=...`).

    Returns: the `.model` path.

    Example:
    >>> from albert_keras.sample_text import read_paragraphs
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "corpus.txt").write_text("\\n".join(read_paragraphs(2000)))
    >>> path = train_sentencepiece(folder / "corpus.txt", str(folder / "spm"), 1000)
    >>> import sentencepiece as spm
    >>> spm.SentencePieceProcessor(model_file=path).id_to_piece(2)
    '[CLS]'
    """
    import sentencepiece as spm

    from albert_keras.atomic_files import remove_empty_folders
    from albert_keras.tokenizers.sentencepiece_text import preprocess_text

    if not isinstance(vocab_size, int) or vocab_size < 6:
        raise ValueError(
            "`vocab_size` must be an integer above the 5 special pieces. "
            f"Received: vocab_size={vocab_size!r}"
        )
    lines = [preprocess_text(line, lowercase) for line in read_lines(input_files)]
    check_line_lengths(lines)
    made = make_folder(os.path.dirname(os.path.abspath(output_prefix)), output_prefix)
    # Trained beside the target, then renamed: a kill leaves no half model.
    temporary = temporary_path(str(output_prefix))
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=temporary,
            vocab_size=vocab_size,
            minloglevel=2,
            num_threads=num_threads or os.cpu_count() or 1,
            **{**OFFICIAL_OPTIONS, **options},
        )
        for suffix in (".vocab", ".model"):  # the model last: the pair is whole
            os.replace(temporary + suffix, str(output_prefix) + suffix)
    except RuntimeError as e:
        # e.g. "Vocabulary size is too high (8000). Please set it to a value
        # <= 4107.": SentencePiece says how much the corpus allows.
        fewer = " Ask for fewer pieces (vocab --size, pretrain --vocab-size)"
        fix = f"{fewer} or give more text." if "too high" in str(e) else ""
        raise ValueError(f"SentencePiece could not train: {e}{fix}") from None
    finally:
        for suffix in (".vocab", ".model"):
            if os.path.exists(temporary + suffix):
                os.remove(temporary + suffix)
        if not os.path.exists(str(output_prefix) + ".model"):
            remove_empty_folders(made)  # refused: no empty folder left behind
    return str(output_prefix) + ".model"


def build_wordpiece_vocabulary(
    input_files,
    output_path: str,
    vocab_size: int = 21128,
    lowercase: bool = True,
    unused_tokens: int = 99,
    max_characters: int | None = None,
    iterations: int = 3,
) -> str:
    """Learns a WordPiece `vocab.txt` (the `*_zh` models' kind) from text.

    Words are counted after the official basic tokenization (CJK ideographs
    one per word, punctuation apart, lowercasing and accent stripping when
    `lowercase`). The vocabulary is the reserved tokens, the characters
    (each also as a "##" continuation, but CJK ideographs, which are always
    words of their own), then the pieces the greedy longest-match tokenizer
    uses most: candidates are all word prefixes and "##" inner pieces by
    frequency, then, `iterations` times, the words are tokenized with the
    current vocabulary and the most used pieces are kept (the top-down
    scheme of BERT's and tf-text's learners, with the size reached directly
    instead of by a search over count thresholds).

    Args:
        input_files: UTF-8 text files (one or a list).
        output_path: the `vocab.txt` to write (folders are created).
        vocab_size: tokens, reserved ones included (the release: 21128).
        lowercase: `do_lower_case` of the tokenizer that will use it.
        unused_tokens: `[unusedN]` slots after `[PAD]` (99 gives the release's
            special ids).
        max_characters: alphabet size; rarer characters become `[UNK]`.
            Default: as many as leave half the room to longer pieces, then
            as many as fit in the room those leave (Chinese has few).
        iterations: refinement passes.

    Returns: `output_path`.

    Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "zh.txt").write_text("天下大势，分久必合，合久必分。\\n" * 50)
    >>> path = build_wordpiece_vocabulary(folder / "zh.txt", folder / "vocab.txt", 200)
    >>> open(path).read().split("\\n")[100:104]
    ['[UNK]', '[CLS]', '[SEP]', '[MASK]']
    """
    import tensorflow as tf

    from albert_keras.tokenizers.albert_wordpiece_tokenizer import basic_tokenize

    reserved = wordpiece_reserved_tokens(unused_tokens)
    if not isinstance(vocab_size, int) or vocab_size <= len(reserved):
        raise ValueError(
            f"`vocab_size` must exceed the {len(reserved)} reserved tokens. "
            f"Received: vocab_size={vocab_size!r}"
        )
    counts = collections.Counter()
    batches = tf.data.Dataset.from_tensor_slices(read_lines(input_files)).batch(512)
    for words in batches.map(
        lambda text: tf.strings.split(basic_tokenize(text, lowercase)).flat_values
    ):
        counts.update(words.numpy().tolist())
    counts = {word.decode("utf-8"): count for word, count in counts.items()}
    vocab = learn_wordpieces(
        counts, vocab_size - len(reserved), max_characters, iterations
    )
    vocab = reserved + [token for token in vocab if token not in set(reserved)]
    make_folder(os.path.dirname(os.path.abspath(output_path)), output_path)
    with atomic_write(output_path) as f:
        f.write("\n".join(vocab) + "\n")
    return str(output_path)


def _stands_alone(char: str) -> bool:
    """CJK ideographs and punctuation are always words of their own."""
    from albert_keras.tokenizers.unicode_tables import _is_cjk, _is_punctuation

    return _is_cjk(ord(char)) or _is_punctuation(char)


def learn_wordpieces(
    word_counts: dict,
    size: int,
    max_characters: int | None = None,
    iterations: int = 3,
    max_piece_length: int = 16,
) -> list[str]:
    """WordPiece tokens for words with counts (see `build_wordpiece_vocabulary`).

    Args:
        word_counts: {word: count} after basic tokenization.
        size: tokens to return.
        max_characters: alphabet size (default: half of `size`, in tokens).
        iterations: refinement passes.
        max_piece_length: longest piece, in characters.

    Returns: characters, "##" characters, then pieces, at most `size`.

    Example:
    >>> counts = {"low": 5, "lower": 2, "lowest": 3, "newest": 4}
    >>> learn_wordpieces(counts, 24)[12:16]
    ['low', '##est', '##ow', 'lo']
    """
    chars = collections.Counter()
    for word, count in word_counts.items():
        for char in word:
            chars[char] += count

    def char_tokens(alphabet):
        inner = ["##" + c for c in alphabet if not _stands_alone(c)]
        return list(alphabet) + inner

    ranked = sorted(chars, key=lambda c: (-chars[c], c))
    alphabet = ranked[: max_characters or len(ranked)]
    while len(char_tokens(alphabet)) > (size if max_characters else size // 2):
        alphabet = alphabet[: len(alphabet) * 9 // 10]
        if len(alphabet) < 2:
            break
    base = char_tokens(alphabet)[:size]

    def rarer(spare):  # the characters cut for longer pieces, in their room
        extra = []
        if max_characters:  # the alphabet size was asked for
            return extra
        for char in ranked[len(alphabet) :]:
            if len(tokens := char_tokens([char])) > spare - len(extra):
                break
            extra += tokens
        return extra

    allowed = set(alphabet)
    words = {
        w: c
        for w, c in word_counts.items()
        if len(w) > 1 and c > 1 and set(w) <= allowed
    }
    room = size - len(base)
    if room <= 0 or not words:
        return base + rarer(room)

    def best(scores):
        known = set(base)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [piece for piece, _ in ranked if piece not in known][:room]

    candidates = collections.Counter()
    for word, count in words.items():
        for start in range(len(word)):
            for end in range(start + 2, min(len(word), start + max_piece_length) + 1):
                piece = word[start:end]
                candidates[piece if start == 0 else "##" + piece] += count
    pieces = best(candidates)
    for _ in range(iterations):
        vocab = set(base) | set(pieces)
        used = collections.Counter()
        for word, count in words.items():
            start = 0
            while start < len(word):
                for end in range(min(len(word), start + max_piece_length), start, -1):
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in vocab:
                        break
                if end - start > 1:
                    used[piece] += count
                start = end
        # Pieces the tokenizer does not reach lose to the next candidates.
        for piece in candidates:
            if piece not in used:
                used[piece] = 0
        scores = {p: used[p] * 1_000_000 + candidates[p] for p in candidates}
        pieces = best(scores)
    return base + pieces + rarer(room - len(pieces))


# `albert_keras/cli.py` imported the subcommand from here before vocab_cli.py.
from albert_keras.tokenizers.vocab_cli import add_parser, run  # noqa: E402, F401
