"""Packing against the official run_classifier and run_squad code, on real text."""

import json

import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import task_file
from official_tokenization import (
    official_classifier_features,
    official_squad_features,
    record_exact_match,
    tokenization,
)
from tokenizer_cases import SANGUO_LATER

from albert_keras.tokenizers import (
    AlbertPacker,
    AlbertSpanPacker,
    AlbertTokenizer,
    AlbertWordPieceTokenizer,
)


def read_jsonl(path, count):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line, _ in zip(f, range(count), strict=False)]


@pytest.fixture(scope="module")
def pairs():
    """Real (evidence, claim) pairs, some with an empty or missing second text."""
    rows = read_jsonl(task_file("vitaminc", "dev.jsonl"), 400)
    found = [(r["text_a"], r["text_b"]) for r in rows]
    found[::37] = [(a, "") for a, _ in found[::37]]  # official `if tokens_b:`
    found[5::41] = [(a, None) for a, _ in found[5::41]]
    return found


def assert_packed_as_official(ours, expected, what):
    """Token, segment and mask rows equal the official features, row by row.

    Token rows may differ only by the one known tokenizer difference
    (test_albert_tokenizer): two segmentations with exactly the same score
    ("0"+"00" / "00"+"0" where the vocabulary has no "000"), which tf-text
    (float) and sentencepiece (double) may order differently. Such a row
    holds the same ids in another order; at most one row in a hundred.
    """
    ours = {k: v.numpy().tolist() for k, v in ours.items()}
    theirs = {
        k: [list(f[index]) for f in expected]
        for index, k in enumerate(("token_ids", "segment_ids", "padding_mask"))
    }
    for key in ("segment_ids", "padding_mask"):
        assert ours[key] == theirs[key], key
    differ = [
        (a, b)
        for a, b in zip(ours["token_ids"], theirs["token_ids"], strict=True)
        if a != b
    ]
    record_exact_match(what, len(expected) - len(differ), len(expected))
    assert all(sorted(a) == sorted(b) for a, b in differ), differ[:1]
    assert len(differ) <= len(expected) // 100, len(differ)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("length", [8, 16, 32, 64, 128])
def test_pairs_pack_as_run_classifier(spm_models, pairs, length, lower):
    model = spm_models["uncased" if lower else "cased"]
    official = tokenization.FullTokenizer(None, lower, model)
    expected = official_classifier_features(official, pairs, length, True, lower)
    tokenizer = AlbertTokenizer(model, lowercase=lower)
    packer = AlbertPacker.for_tokenizer(tokenizer, length)
    ours = packer(
        tokenizer([a for a, _ in pairs]), tokenizer([b or "" for _, b in pairs])
    )
    case = "uncased" if lower else "cased"
    what = f"SentencePiece pair packing, vitaminc, {case}, length {length}"
    assert_packed_as_official(ours, expected, what)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("length", [5, 48, 128])
def test_wordpiece_pairs_pack_as_run_classifier(
    wordpiece_vocab, chinese, length, lower
):
    lines = chinese[SANGUO_LATER][:200]
    pairs = list(zip(lines[::2], lines[1::2], strict=False))  # an odd one left
    official = tokenization.FullTokenizer(wordpiece_vocab, do_lower_case=lower)
    expected = official_classifier_features(official, pairs, length, False, lower)
    tokenizer = AlbertWordPieceTokenizer(wordpiece_vocab, lowercase=lower)
    packer = AlbertPacker.for_tokenizer(tokenizer, length)
    ours = packer(tokenizer([a for a, _ in pairs]), tokenizer([b for _, b in pairs]))
    case = "uncased" if lower else "cased"
    what = f"WordPiece pair packing, zh_sanguo 4-8, {case}, length {length}"
    assert_packed_as_official(ours, expected, what)


def test_dynamic_length_single_and_one_text():
    rng = np.random.default_rng(0)
    a = [list(rng.integers(5, 100, n)) for n in (0, 3, 30)]
    fixed = AlbertPacker(16)(a)
    dynamic = AlbertPacker(16, dynamic_length=True)(a)
    assert dynamic["token_ids"].shape == (3, 16)  # the 30-token text fills it
    short = AlbertPacker(16, dynamic_length=True)(a[:2])
    assert short["token_ids"].shape == (2, 5)
    np.testing.assert_array_equal(short["token_ids"], fixed["token_ids"][:2, :5])
    for key in fixed:
        np.testing.assert_array_equal(dynamic[key], fixed[key])
    one = AlbertPacker(16)(tf.constant(a[1], tf.int32))
    assert one["token_ids"].numpy().tolist() == fixed["token_ids"].numpy()[1].tolist()
    with pytest.raises(ValueError, match="at least 3"):
        AlbertPacker(2)


def test_packer_in_tf_data(spm_models, pairs):
    tokenizer = AlbertTokenizer(spm_models["uncased"])
    packer = AlbertPacker(32)
    texts = [a for a, _ in pairs[:50]]
    data = tf.data.Dataset.from_tensor_slices(texts).map(lambda t: packer(tokenizer(t)))
    rows = [x["token_ids"].numpy().tolist() for x in data]
    assert rows == packer(tokenizer(texts))["token_ids"].numpy().tolist()


@pytest.fixture(scope="module")
def squad():
    with open(task_file("disfl_qa", "dev.json"), encoding="utf-8") as f:
        data = json.load(f)["data"]
    # tests/data holds 20 paragraphs: four questions of each.
    questions, contexts = [], []
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"][:4]:
                questions.append(qa["question"])
                contexts.append(paragraph["context"])
    return questions[:90], contexts[:90]


@pytest.mark.parametrize(
    "length, stride, max_query", [(64, 16, 12), (128, 48, 64), (40, 100, 8)]
)
def test_windows_as_run_squad(spm_models, squad, length, stride, max_query):
    model = spm_models["uncased"]
    questions, contexts = squad
    questions = questions + ["who?", "a question with no context"]
    contexts = contexts + ["Short context.", ""]
    expected, failed = official_squad_features(
        model, questions, contexts, True, length, stride, max_query
    )
    # albert-tensorflow 1.1 aligns characters with byte lengths under Python 3
    # and fails on paragraphs with non-ASCII text; those are left out.
    assert all(not contexts[i].isascii() for i in failed)
    assert len(expected) >= 50
    tokenizer = AlbertTokenizer(model)
    packer = AlbertSpanPacker.for_tokenizer(
        tokenizer, length, doc_stride=stride, max_query_length=max_query
    )
    out = packer(tokenizer(questions), tokenizer(contexts))
    out = {k: v.numpy() for k, v in out.items()}
    # The empty context has no window, as officially.
    assert set(out["example_index"]) - set(failed) == set(expected)
    for index, features in expected.items():
        rows = np.flatnonzero(out["example_index"] == index)
        assert len(rows) == len(features)
        for row, feature in zip(rows, features, strict=True):
            assert out["token_ids"][row].tolist() == feature.input_ids
            assert out["segment_ids"][row].tolist() == feature.segment_ids
            assert out["padding_mask"][row].tolist() == feature.input_mask
            assert out["p_mask"][row].tolist() == feature.p_mask
            max_context = [0] * length
            for position, is_max in feature.token_is_max_context.items():
                max_context[position] = int(is_max)
            assert out["token_is_max_context"][row].tolist() == max_context
            offset = out["doc_offset"][row]
            assert offset == feature.input_ids.index(3) + 1
    windows = sum(len(f) for f in expected.values())
    record_exact_match(
        f"span windows, disfl_qa, {length}/{stride}/{max_query} (the official code "
        f"fails on {len(failed)} non-ASCII paragraphs)",
        windows,
        windows,
    )


def test_span_packer_checks():
    with pytest.raises(ValueError, match="max_query_length"):
        AlbertSpanPacker(16, max_query_length=13)
    with pytest.raises(ValueError, match="doc_stride"):
        AlbertSpanPacker(16, doc_stride=0, max_query_length=4)
