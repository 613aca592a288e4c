"""AlbertTokenizer against the official albert.tokenization, on real text."""

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf
from official_tokenization import official_ids, record_exact_match, tokenization
from tokenizer_cases import DIGIT_COMMA_PIECES, EDGE_CASES

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer, load_tokenizer
from albert_keras.tokenizers.unicode_tables import ranges


def compare(model_file, lower, lines, label):
    """Lines whose ids differ from the official tokenizer's, and the rate printed."""
    ours = AlbertTokenizer(model_file, lowercase=lower)(tf.constant(lines)).to_list()
    theirs = official_ids(model_file, lines, lower)
    misses = [(t, a, b) for t, a, b in zip(lines, ours, theirs, strict=True) if a != b]
    case = "uncased" if lower else "cased"
    record_exact_match(
        f"SentencePiece ids, {label}, {case}", len(lines) - len(misses), len(lines)
    )
    return misses


def assert_exact(model_file, lower, lines, label):
    misses = compare(model_file, lower, lines, label)
    assert not misses, [m[0][:200] for m in misses[:3]]


def unicode_lines():
    """Every character the official code treats specially, in context.

    Each between two letters, words apart (no long letter runs, whose
    segmentations tie), and around capital sigma (the final form).
    """
    lines = []
    for name in ("whitespace", "combining", "lower_fixups", "case_ignorable"):
        chars = [chr(c) for a, b in ranges(name) for c in range(a, b + 1)]
        for i in range(0, len(chars), 16):
            group = chars[i : i + 16]
            lines.append(" ".join(f"k{c}e" for c in group) + " 1" + "".join(group))
            lines.append(" ".join(f"A{c}\u03a3 \u03a3{c}x" for c in group))
    return lines


@pytest.mark.parametrize("lower", [True, False])
def test_real_english_matches_official(spm_models, english, lower):
    model = spm_models["uncased" if lower else "cased"]
    for name, lines in english.items():
        assert_exact(model, lower, lines + EDGE_CASES, name)


def test_digit_comma_model_differs_only_in_exact_ties(spm_models, english):
    """A vocabulary full of digit pieces: the one known, measured difference.

    sentencepiece compares path scores in double, tf-text in float; when two
    orders of the same pieces score exactly the same ("0"+"00" / "00"+"0"),
    float rounding may pick the other order. Every difference must be such a
    reordering, and rare.
    """
    lines = english["en_brown.txt"] + EDGE_CASES
    misses = compare(spm_models["digit_comma"], False, lines, "digit-comma model")
    assert len(misses) <= 0.003 * len(lines)
    for text, ours, theirs in misses:
        assert sorted(ours) == sorted(theirs), text[:200]


@pytest.mark.parametrize("lower", [True, False])
def test_every_special_character_matches_official(spm_models, lower):
    model = spm_models["uncased" if lower else "cased"]
    assert_exact(model, lower, unicode_lines(), "unicode classes")


def test_embedded_model_matches_official(english):
    lines = english["en_brown.txt"][:1000] + EDGE_CASES
    assert_exact(SPM_MODEL_PATH, True, lines, "austen-8k on en_brown")


def test_digit_comma_rule_fires_on_real_text(spm_models, english):
    """The official re-split, Python 3 quirk included (the stem keeps its "▁")."""
    model = spm_models["digit_comma"]
    tokenizer = AlbertTokenizer(model, lowercase=False)
    processor = spm.SentencePieceProcessor(model_file=model)
    lines = [line for line in english["en_brown.txt"] if any(c.isdigit() for c in line)]
    raw = processor.encode(
        [tokenization.preprocess_text(t, lower=False) for t in lines], out_type=str
    )
    fired = sum(piece in DIGIT_COMMA_PIECES for pieces in raw for piece in pieces)
    # Real numbers with commas ("$200,000", "$15,000,000") hit the rule: 19
    # times in the 48 Brown documents of tests/data.
    assert fired >= 5
    pieces = tokenizer.tokenize_pieces(["paid 10, then 1,000, then"]).to_list()[0]
    pieces = [p.decode() for p in pieces]
    official = tokenization.FullTokenizer(None, False, model).tokenize(
        "paid 10, then 1,000, then"
    )
    assert pieces == [tokenization.printable_text(p) for p in official]
    assert "0," not in pieces and "," in pieces


def test_vocabulary_api_and_detokenize(spm_models):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    assert tokenizer.vocabulary_size() == 3000
    assert tokenizer.special_token_ids == {
        "pad": 0,
        "unk": 1,
        "cls": 2,
        "sep": 3,
        "mask": 4,
    }
    assert tokenizer.id_to_token(4) == "[MASK]" and tokenizer.token_to_id("[CLS]") == 2
    assert tokenizer.token_to_id("no such piece") == 1
    assert tokenizer.get_vocabulary()[:2] == ["<pad>", "<unk>"]
    with pytest.raises(ValueError, match=r"token_id.*\[0, 3000\)"):
        tokenizer.id_to_token(3000)
    ids = tokenizer(["Emma Woodhouse, handsome", ""])
    text = tokenizer.detokenize(ids).numpy()
    assert [t.decode() for t in text] == ["emma woodhouse, handsome", ""]
    packed = tf.constant([[2] + ids[0].numpy().tolist() + [3, 0, 0]])
    assert tokenizer.detokenize(packed).numpy()[0].decode() == text[0].decode()
    scalar = tokenizer("Emma")
    assert (
        scalar.shape.rank == 1
        and scalar.numpy().tolist() == ids[0].numpy()[:1].tolist()
    )


def test_tf_data_and_graph(spm_models, english):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    lines = english["en_brown.txt"][:100]
    data = tf.data.Dataset.from_tensor_slices(lines).batch(32).map(tokenizer)
    batched = [row for batch in data for row in batch.to_list()]
    one_by_one = tf.data.Dataset.from_tensor_slices(lines).map(tokenizer)
    assert batched == [row.numpy().tolist() for row in one_by_one]
    assert batched == tokenizer(lines).to_list()
    graph = tf.function(lambda x: tokenizer(x).flat_values)
    assert graph(tf.constant(lines)).numpy().tolist() == sum(batched, [])


def test_the_model_is_an_asset_not_config(spm_models, tmp_path):
    tokenizer = AlbertTokenizer(spm_models["cased"], lowercase=False, name="tok")
    config = tokenizer.get_config()
    assert set(config) >= {"lowercase", "name"} and len(str(config)) < 1000
    tokenizer.save_assets(str(tmp_path))
    clone = AlbertTokenizer.from_config(config)
    clone.load_assets(str(tmp_path))
    text = tf.constant(["Emma Woodhouse, handsome", "1,000, then"])
    assert not clone.lowercase
    assert clone(text).to_list() == tokenizer(text).to_list()


def test_bad_input_never_fails(spm_models):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    text = tf.constant(
        [b"", b"a\x00b", b"x" * 200_000, b"caf\xe9 ok", b"\xff\xfe", b"\xed\xa0\x80z"]
    )
    ids = tokenizer(text).to_list()
    assert ids[0] == [] and ids[4] == []
    # Bytes that are not UTF-8 are dropped, as the official convert_to_unicode.
    decoded = [t.decode("utf-8", "ignore") for t in text.numpy()]
    assert ids == official_ids(spm_models["uncased"], decoded, True)


def test_bad_vocabulary_files(tmp_path, wordpiece_vocab):
    bad = tmp_path / "x.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="is not a SentencePiece model.*albert-keras"):
        AlbertTokenizer(str(bad))
    with pytest.raises(ValueError, match="looks like a WordPiece vocab.txt"):
        AlbertTokenizer(wordpiece_vocab)
    (tmp_path / "empty.model").write_bytes(b"")
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        AlbertTokenizer(str(tmp_path / "empty.model"))
    with pytest.raises(ValueError, match="Cannot read .*No such file"):
        AlbertTokenizer(str(tmp_path / "missing.model"))
    lines = [f"line {i} of some text with words" for i in range(300)]
    for kind, options in (("plain", {}), ("bpe", {"model_type": "bpe"})):
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=str(tmp_path / kind),
            vocab_size=50,
            minloglevel=2,
            **options,
        )
    with pytest.raises(
        ValueError, match=r"lacks the ALBERT special tokens \['\[CLS\]'"
    ):
        AlbertTokenizer(str(tmp_path / "plain.model"))
    with pytest.raises(ValueError, match="is a BPE model"):
        AlbertTokenizer(str(tmp_path / "bpe.model"))
    with pytest.raises(ValueError, match="no SentencePiece model yet"):
        AlbertTokenizer()(["text"])


def test_a_vocabulary_folder_is_told_to_pass_the_file_in_it(tmp_path, spm_models):
    # Before: `finetune --vocab runs/x` said "Cannot read the vocabulary
    # 'runs/x': Is a directory." without naming the file to pass.
    import shutil

    shutil.copy(spm_models["cased"], tmp_path / "30k-clean.model")
    with pytest.raises(ValueError, match=r"is a folder; pass .*30k-clean.model"):
        load_tokenizer(str(tmp_path))


def test_load_tokenizer_picks_the_kind(spm_models, wordpiece_vocab):
    assert type(load_tokenizer(spm_models["cased"])).__name__ == "AlbertTokenizer"
    wordpiece = load_tokenizer(wordpiece_vocab, lowercase=False)
    assert type(wordpiece).__name__ == "AlbertWordPieceTokenizer"
    assert not wordpiece.lowercase


def test_numbers_stay_exact_in_batches_of_any_size(spm_models):
    """Rows are independent: a row's ids never depend on its batch."""
    tokenizer = AlbertTokenizer(spm_models["digit_comma"], lowercase=False)
    lines = EDGE_CASES * 3
    whole = tokenizer(lines).to_list()
    rng = np.random.default_rng(0)
    for size in rng.integers(1, 9, 5):
        parts = [lines[i : i + size] for i in range(0, len(lines), size)]
        assert sum((tokenizer(p).to_list() for p in parts), []) == whole
