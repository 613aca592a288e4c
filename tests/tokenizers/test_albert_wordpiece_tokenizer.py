"""AlbertWordPieceTokenizer against the official tokenizer, on real Chinese text."""

import pytest
import tensorflow as tf
from official_tokenization import official_wordpiece_ids, record_exact_match
from tokenizer_cases import EDGE_CASES

from albert_keras.tokenizers import AlbertWordPieceTokenizer
from albert_keras.tokenizers.unicode_tables import ranges

MIXED = [
    "中文 mixed with ASCII Text, café 2,3! 「引号」《书名》——破折号…",
    "\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff21\uff22\uff23 "
    "\uff11\uff12\uff13\uff0c\u3002",
    "a\x00b\ufffdc\u200bd\te\u2028f\ue000g",
    "unbelievable " * 3,
    "x" * 201 + " " + "y" * 200,
    "\u0130stanbul \u039f\u0394\u039f\u03a3 \u00c5ngstr\u00f6m \uf900\U00020000",
]


def unicode_lines():
    """Every character the basic tokenizer treats specially, between letters."""
    lines = []
    for name in ("clean_drop", "clean_space", "nonspacing_mark", "punctuation"):
        chars = [chr(c) for a, b in ranges(name) for c in range(a, b + 1)]
        for i in range(0, len(chars), 24):
            lines.append(" ".join(f"k{c}e" for c in chars[i : i + 24]))
    return lines


def compare(vocab, lower, lines, label):
    ours = AlbertWordPieceTokenizer(vocab, lowercase=lower)(tf.constant(lines))
    theirs = official_wordpiece_ids(vocab, lines, lower)
    misses = [
        t for t, a, b in zip(lines, ours.to_list(), theirs, strict=True) if a != b
    ]
    case = "uncased" if lower else "cased"
    record_exact_match(
        f"WordPiece ids, {label}, {case}", len(lines) - len(misses), len(lines)
    )
    assert not misses, [m[:200] for m in misses[:3]]


@pytest.mark.parametrize("lower", [True, False])
def test_real_chinese_matches_official(wordpiece_vocab, chinese, english, lower):
    for name, lines in chinese.items():
        compare(wordpiece_vocab, lower, lines + MIXED + EDGE_CASES, name)
    compare(wordpiece_vocab, lower, english["en_brown.txt"][:500], "en_brown.txt")


@pytest.mark.parametrize("lower", [True, False])
def test_every_special_character_matches_official(wordpiece_vocab, lower):
    compare(wordpiece_vocab, lower, unicode_lines(), "unicode classes")


def test_characters_newer_than_python_decompose_as_python(tmp_path):
    """Scripts Python's Unicode lacks but ICU's (tf-text's NFD) decomposes.

    Python keeps U+105C9 (Todhri, Unicode 16) as it is; ICU would give
    U+105D2 U+0307. A vocabulary with both forms tells them apart.
    """
    blocks = [(0x105C0, 0x105FF), (0x11380, 0x113FF), (0x16100, 0x1613F)]
    chars = [chr(cp) for a, b in [*blocks, (0x16D40, 0x16D7F)] for cp in range(a, b)]
    vocab = tmp_path / "vocab.txt"
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "k", "##e"]
    vocab.write_text("\n".join(tokens + chars + [f"##{c}" for c in chars]) + "\n")
    lines = [" ".join(f"k{c}e" for c in chars[i : i + 32]) for i in range(0, 256, 32)]
    compare(str(vocab), True, lines, "Unicode newer than Python's")


def test_vocabulary_layout_and_api(wordpiece_vocab):
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab)
    # The release's layout: [PAD], [unused1..99], [UNK], [CLS], [SEP], [MASK].
    assert tokenizer.special_token_ids == {
        "pad": 0,
        "unk": 100,
        "cls": 101,
        "sep": 102,
        "mask": 103,
    }
    assert tokenizer.vocabulary_size() == len(tokenizer.get_vocabulary()) <= 8000
    assert tokenizer.id_to_token(101) == "[CLS]" and tokenizer.token_to_id("???") == 100
    ids = tokenizer(["天下大势，分久必合。", "Running quickly"])
    pieces = tokenizer.tokenize_pieces(["Running quickly"]).to_list()[0]
    assert any(p.startswith(b"##") for p in pieces) or len(pieces) == 2
    text = [t.decode() for t in tokenizer.detokenize(ids).numpy()]
    assert text == ["天 下 大 势 ， 分 久 必 合 。", "running quickly"]
    assert tokenizer("天下").numpy().tolist() == ids[0].numpy()[:2].tolist()


def test_vocabulary_is_an_asset(wordpiece_vocab, tmp_path):
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab, lowercase=False)
    tokenizer.save_assets(str(tmp_path))
    clone = AlbertWordPieceTokenizer.from_config(tokenizer.get_config())
    clone.load_assets(str(tmp_path))
    assert clone.get_vocabulary() == tokenizer.get_vocabulary()
    assert clone(MIXED).to_list() == tokenizer(MIXED).to_list()


def test_vocabulary_checks(tmp_path, spm_models):
    path = tmp_path / "v.txt"
    path.write_text("[PAD]\n[UNK]\n中\n")
    with pytest.raises(ValueError, match=r"lacks the special tokens \['\[CLS\]'"):
        AlbertWordPieceTokenizer(str(path))
    path.write_text("[PAD]\n\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    with pytest.raises(ValueError, match="Line 2 .* is blank"):
        AlbertWordPieceTokenizer(str(path))
    with pytest.raises(ValueError, match="Cannot read the WordPiece vocabulary"):
        AlbertWordPieceTokenizer(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="not UTF-8 text.*AlbertTokenizer"):
        AlbertWordPieceTokenizer(spm_models["uncased"])
    # Repeated tokens keep their first id and take none, as load_vocab.
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[UNK]\n[SEP]\n[MASK]\nab\n")
    assert AlbertWordPieceTokenizer(str(path)).token_to_id("ab") == 5


def test_bad_input_never_fails(wordpiece_vocab):
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab)
    text = tf.constant([b"", b"\x00", "天下".encode() * 50_000, b"caf\xe9 \xff\xfe"])
    ids = tokenizer(text).to_list()
    decoded = [t.decode("utf-8", "ignore") for t in text.numpy()]
    assert ids == official_wordpiece_ids(wordpiece_vocab, decoded, True)
    assert ids[0] == [] and ids[1] == [] and len(ids[2]) == 100_000
