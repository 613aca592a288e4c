"""AlbertTokenizer against the official albert.tokenization on real text."""

import os

import pytest
import sentencepiece as spm
import tensorflow as tf
from albert_test_case import shared_data_dir
from official_tokenization import official_ids

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer

DATA = os.path.join(shared_data_dir(), "pretrain")
EXTRA = [
    "1,000, 2,5, and 10,000,000, then 3,",  # digits before commas
    "Café naïve résumé Ångström",  # accents
    "``quoted'' and \u201ccurly\u201d",  # quotes
    "tab\there\u00a0nbsp\u2003em  space",  # whitespace kinds
    "ﬁne Ⅻ ㎏ ½",  # NFKD compatibility forms
    "中文 mixed with ASCII 2,3,",
    "",
]


def real_lines(name, count):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    step = max(1, len(lines) // count)
    return lines[::step][:count]


@pytest.fixture(scope="module")
def cased_model(tmp_path_factory):
    """A cased SentencePiece model trained on Brown + news, official layout."""
    prefix = str(tmp_path_factory.mktemp("spm") / "cased")
    text = real_lines("en_brown.txt", 3000) + real_lines("en_news.txt", 3000)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_prefix=prefix,
        vocab_size=3000,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        model_type="unigram",
        minloglevel=2,
        num_threads=2,
    )
    return prefix + ".model"


def exact_rate(model_file, lower, lines):
    tokenizer = AlbertTokenizer(model_file, lowercase=lower)
    ours = tokenizer(tf.constant(lines)).to_list()
    theirs = official_ids(model_file, lines, lower)
    same = [a == b for a, b in zip(ours, theirs, strict=True)]
    return sum(same) / len(same), [
        line for line, ok in zip(lines, same, strict=True) if not ok
    ]


@pytest.mark.parametrize("corpus", ["en_austen.txt", "en_brown.txt", "en_news.txt"])
def test_lowercase_matches_official(corpus):
    lines = real_lines(corpus, 1500) + EXTRA
    rate, misses = exact_rate(SPM_MODEL_PATH, True, lines)
    # The misses are SentencePiece's own Viterbi ties (tf-text bundles another
    # sentencepiece build), on digit runs only; see test_known_misses.
    assert rate >= 0.995, misses[:3]
    assert all(any(c.isdigit() for c in m) for m in misses), misses[:3]


def test_cased_matches_official(cased_model):
    lines = real_lines("en_news.txt", 1500) + real_lines("en_brown.txt", 500) + EXTRA
    rate, misses = exact_rate(cased_model, False, lines)
    assert rate >= 0.995, misses[:3]


def test_known_misses_are_sentencepiece_ties():
    import tensorflow_text as tf_text

    text = "in the $40,000,000 budget"
    proto = open(SPM_MODEL_PATH, "rb").read()
    ours = tf_text.SentencepieceTokenizer(model=proto, out_type=tf.string).tokenize(
        text
    )
    python = spm.SentencePieceProcessor(model_file=SPM_MODEL_PATH).encode(
        text, out_type=str
    )
    # Same score, other split: no preprocessing of ours can change that.
    assert [p.decode() for p in ours.numpy()] != python
    assert "".join(p.decode() for p in ours.numpy()) == "".join(python)


def test_digit_comma_rule_and_vocabulary():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    pieces = [
        p.decode() for p in tokenizer.tokenize_pieces(["paid 2,5, then"]).to_list()[0]
    ]
    assert pieces[-2:] == [",", "\u2581then"]
    assert tokenizer.vocabulary_size() == 8000
    assert tokenizer.token_to_id("[MASK]") == 4 and tokenizer.id_to_token(2) == "[CLS]"
    ids = tokenizer(["emma woodhouse"])
    assert tokenizer.detokenize(ids).numpy()[0].decode() == "emma woodhouse"


def test_in_tf_data():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    data = tf.data.Dataset.from_tensor_slices(
        ["Emma Woodhouse", "handsome, clever"]
    ).batch(2)
    batch = next(iter(data.map(tokenizer)))
    assert (
        batch.to_list() == tokenizer(["Emma Woodhouse", "handsome, clever"]).to_list()
    )


def test_bad_vocabulary_files(tmp_path):
    bad = tmp_path / "x.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="Not a SentencePiece model"):
        AlbertTokenizer(str(bad))
    with pytest.raises(ValueError, match="Cannot read"):
        AlbertTokenizer(str(tmp_path / "missing.model"))
    plain = str(tmp_path / "plain")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(real_lines("en_austen.txt", 500)),
        model_prefix=plain,
        vocab_size=300,
        minloglevel=2,
    )
    with pytest.raises(ValueError, match="lacks the ALBERT special tokens"):
        AlbertTokenizer(plain + ".model")


def test_odd_input_is_handled():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    out = tokenizer(
        tf.constant(["", "a\x00b", "x" * 20000, b"caf\xe9".decode("latin-1")])
    )
    lengths = out.row_lengths().numpy()
    assert lengths[0] == 0 and lengths[1] > 0 and lengths[2] > 0 and lengths[3] > 0


def test_vocab_command_trains_an_albert_vocabulary(tmp_path, capsys):
    from albert_keras.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(real_lines("en_austen.txt", 2000)), encoding="utf-8")
    out = str(tmp_path / "v" / "spm")
    assert (
        main(["vocab", "--input", str(corpus), "--output", out, "--size", "1000"]) == 0
    )
    tokenizer = AlbertTokenizer(out + ".model")
    assert tokenizer.vocabulary_size() == 1000
    lines = real_lines("en_austen.txt", 300)
    assert tokenizer(tf.constant(lines)).to_list() == official_ids(
        out + ".model", lines, True
    )
    (tmp_path / "empty.txt").write_text("\n\n")
    assert main(["vocab", "--input", str(tmp_path / "empty.txt"), "--output", out]) == 2
    assert "corpus is empty" in capsys.readouterr().err
