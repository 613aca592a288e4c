"""AlbertWordPieceTokenizer against the official tokenizer on real Chinese text."""

import collections
import os

import pytest
import tensorflow as tf
from albert_test_case import shared_data_dir
from official_tokenization import tokenization

from albert_keras.tokenizers import AlbertWordPieceTokenizer

DATA = os.path.join(shared_data_dir(), "pretrain")
EXTRA = [
    "中文 mixed with ASCII Text, café 2,3!",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３，。",
    "a\x00b\ufffdc\u200bd\te",
    "unbelievable " * 3,
    "x" * 300,
    "",
]


@pytest.fixture(scope="module")
def corpus_and_vocab(tmp_path_factory):
    lines = []
    for name in ("zh_sanguo.txt", "zh_peoples_daily_199801.txt"):
        with open(os.path.join(DATA, name), encoding="utf-8") as f:
            found = [line.strip() for line in f if line.strip()]
        lines += found[:: max(1, len(found) // 1500)][:1500]
    lines += EXTRA
    counts = collections.Counter(c for line in lines for c in line.lower())
    chars = [c for c, _ in counts.most_common(3000) if not c.isspace()]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]
    vocab += ["##" + c for c in chars[:400]] + ["un", "##believ", "##able", "text"]
    path = tmp_path_factory.mktemp("wp") / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return lines, str(path)


def test_matches_official_on_chinese_and_mixed_text(corpus_and_vocab):
    lines, vocab = corpus_and_vocab
    ours = AlbertWordPieceTokenizer(vocab)(tf.constant(lines)).to_list()
    official = tokenization.FullTokenizer(vocab, do_lower_case=True)
    theirs = [official.convert_tokens_to_ids(official.tokenize(t)) for t in lines]
    mismatches = [t for t, a, b in zip(lines, ours, theirs, strict=True) if a != b]
    assert not mismatches, mismatches[:3]
    assert len(lines) > 3000


def test_vocabulary_checks(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("[PAD]\n[UNK]\n中\n")
    with pytest.raises(ValueError, match=r"lacks special tokens \['\[CLS\]'"):
        AlbertWordPieceTokenizer(str(path))
    with pytest.raises(ValueError, match="Cannot read the vocabulary"):
        AlbertWordPieceTokenizer(str(tmp_path / "missing.txt"))
