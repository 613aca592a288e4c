"""Pretraining data: official format, SOP order, n-gram masking, determinism, errors."""

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from albert_keras.pretraining.pretraining_data import (
    create_instances,
    create_pretraining_data,
    mask_ngrams,
    read_documents,
)
from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

AUSTEN = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "..",
    "shared",
    "data",
    "pretrain",
    "en_austen.txt",
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 150 kB of real text: the first chapters of Austen."""
    import gzip

    from albert_keras.sample_text import CORPUS_PATH

    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(150_000)
    path = tmp_path_factory.mktemp("corpus") / "austen.txt"
    path.write_text(text.rsplit("\n\n", 1)[0] + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def records(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("records")
    stats = create_pretraining_data(
        [corpus],
        str(out),
        max_seq_length=64,
        max_predictions_per_seq=10,
        split_sentences=True,
        seed=3,
        verbose=False,
    )
    return out, stats


def test_official_reader_reads_our_records(records, tmp_path):
    out, stats = records
    script = os.path.join(os.path.dirname(__file__), "official_reader.py")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run(
        [
            sys.executable,
            script,
            str(out / "*.tfrecord"),
            "64",
            "10",
            "16",
            str(tmp_path / "o.npz"),
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    theirs = np.load(tmp_path / "o.npz")
    ours = next(
        iter(pretraining_dataset(str(out / "*.tfrecord"), 16, 64, 10, training=False))
    )
    assert set(theirs.files) == set(ours)
    for key in theirs.files:
        assert np.array_equal(theirs[key], ours[key].numpy()), key


def test_features_are_consistent(records):
    out, stats = records
    batch = next(
        iter(pretraining_dataset(str(out / "*.tfrecord"), 64, 64, 10, training=False))
    )
    ids, mask, segments = (
        batch[k].numpy() for k in ("input_ids", "input_mask", "segment_ids")
    )
    positions = batch["masked_lm_positions"].numpy()
    weights = batch["masked_lm_weights"].numpy()
    labels = batch["masked_lm_ids"].numpy()
    for row in range(len(ids)):
        n = mask[row].sum()
        assert ids[row, 0] == 2 and ids[row, n - 1] == 3  # [CLS] ... [SEP]
        assert (ids[row, n:] == 0).all() and (segments[row, n:] == 0).all()
        seps = np.flatnonzero(ids[row, :n] == 3)
        # Segment ids: 0 up to the first [SEP], then 1 (unless a masked [SEP]).
        assert segments[row, 0] == 0 and segments[row, n - 1] == 1
        real = weights[row] > 0
        assert 1 <= real.sum() <= 10
        assert ((positions[row][real] > 0) & (positions[row][real] < n)).all()
        assert len(seps) >= 2
        # Labels are real pieces, never padding or [CLS].
        assert (labels[row][real] >= 1).all() and (labels[row][real] != 2).all()
    assert abs(stats["masked"] / stats["tokens"] - 0.15) < 0.02


def test_same_seed_same_bytes_other_seed_differs(corpus, tmp_path):
    def run(seed, name):
        create_pretraining_data(
            [corpus], str(tmp_path / name), max_seq_length=64, seed=seed, verbose=False
        )
        (path,) = (tmp_path / name).glob("*.tfrecord")
        return path.read_bytes()

    assert run(7, "a") == run(7, "b")
    assert run(7, "a") != run(8, "c")


def synthetic_documents(num_docs=300, segments=12, tokens=7):
    """Ids encode (document, segment, token) so order can be checked."""
    docs = []
    for d in range(num_docs):
        doc = []
        for s in range(segments):
            ids = [100000 * (d + 1) + 100 * s + k for k in range(tokens)]
            doc.append(([f"\u2581w{i}" for i in ids], ids))
        docs.append(doc)
    return docs


def test_sop_labels_agree_with_segment_order():
    rng = np.random.default_rng(0)
    instances = create_instances(
        synthetic_documents(),
        rng,
        max_seq_length=40,
        short_seq_prob=0.1,
        random_next_sentence=False,
    )
    labels = Counter()
    for a, b, label in instances:
        a_ids, b_ids = [t for _, t in a], [t for _, t in b]
        # SOP pairs are always two consecutive parts of one document.
        assert a_ids[0] // 100000 == b_ids[0] // 100000
        in_order = max(a_ids) < min(b_ids)
        assert in_order == (label == 0)
        assert in_order or min(a_ids) > max(b_ids)  # swapped, not mixed
        labels[label] += 1
    assert 0.4 < labels[1] / sum(labels.values()) < 0.6


def test_sop_splits_a_lone_long_segment():
    rng = np.random.default_rng(4)
    docs = synthetic_documents(num_docs=50, segments=2, tokens=60)
    instances = create_instances(
        docs, rng, max_seq_length=40, short_seq_prob=0.0, random_next_sentence=False
    )
    for a, b, label in instances:
        a_ids, b_ids = [t for _, t in a], [t for _, t in b]
        assert a_ids[0] // 100 == b_ids[0] // 100  # the same segment, cut in two
        assert (max(a_ids) < min(b_ids)) == (label == 0)


def test_random_next_sentence_pairs_other_documents():
    rng = np.random.default_rng(1)
    instances = create_instances(
        synthetic_documents(),
        rng,
        max_seq_length=40,
        short_seq_prob=0.0,
        random_next_sentence=True,
    )
    for a, b, label in instances:
        same_doc = a[0][1] // 100000 == b[0][1] // 100000
        assert same_doc == (label == 0)
        if label == 0:
            assert max(t for _, t in a) < min(t for _, t in b)  # NSP keeps order


def test_ngram_lengths_follow_one_over_n():
    rng = np.random.default_rng(2)
    words = [f"\u2581w{i}" for i in range(2000)]
    ids = list(range(5, 2005))
    spans = Counter()
    masked_total = replaced = kept = 0
    for _ in range(20):
        out, positions, labels, span_words = mask_ngrams(
            words,
            ids,
            rng,
            masked_lm_prob=0.05,
            max_predictions=100,
            vocab_size=3000,
            mask_id=4,
        )
        spans.update(span_words)
        masked_total += len(positions)
        replaced += sum(out[p] == 4 for p in positions)
        kept += sum(out[p] == ids[p] for p in positions)
        assert labels == [ids[p] for p in positions]
    total = sum(spans.values())
    expected = np.array([1, 1 / 2, 1 / 3]) / (1 + 1 / 2 + 1 / 3)
    got = np.array([spans[n] / total for n in (1, 2, 3)])
    assert np.abs(got - expected).max() < 0.05, got
    assert abs(replaced / masked_total - 0.8) < 0.05
    assert abs(kept / masked_total - 0.1) < 0.04


def test_whole_words_are_masked_together():
    rng = np.random.default_rng(3)
    pieces = ["[CLS]"] + ["\u2581un", "believ", "able", "\u2581cat"] * 10 + ["[SEP]"]
    ids = list(range(len(pieces)))
    for _ in range(20):
        _, positions, _, _ = mask_ngrams(
            pieces,
            ids,
            rng,
            masked_lm_prob=0.2,
            max_predictions=8,
            vocab_size=100,
            mask_id=4,
        )
        chosen = set(positions)
        for start in range(1, len(pieces) - 1, 4):
            word = {start, start + 1, start + 2}
            assert word <= chosen or not (word & chosen)


def test_bad_input(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n\n")
    with pytest.raises(ValueError, match="No training instance"):
        create_pretraining_data([str(empty)], str(tmp_path / "o"), verbose=False)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        read_documents(str(latin))
    with pytest.raises(ValueError, match="No input file matches"):
        create_pretraining_data([str(tmp_path / "nope*.txt")], str(tmp_path / "o"))
    with pytest.raises(ValueError, match="max_seq_length=4"):
        create_pretraining_data([str(latin)], str(tmp_path / "o"), max_seq_length=4)
    not_model = tmp_path / "vocab.model"
    not_model.write_text("hello")
    good = tmp_path / "good.txt"
    good.write_text("One line here.\nAnother line there.\n")
    with pytest.raises(ValueError, match="not a readable SentencePiece model"):
        create_pretraining_data(
            [str(good)], str(tmp_path / "o"), vocab=str(not_model), verbose=False
        )


def test_dynamic_masking_draws_new_masks_each_pass(corpus, tmp_path):
    import tensorflow as tf

    from albert_keras.pretraining.dynamic_masking import dynamic_masking

    out = tmp_path / "unmasked"
    create_pretraining_data(
        [corpus],
        str(out),
        max_seq_length=64,
        max_predictions_per_seq=10,
        masked_lm_prob=0.0,
        seed=5,
        verbose=False,
    )
    pattern = str(out / "*.tfrecord")
    plain = list(pretraining_dataset(pattern, 1000, 64, 10, training=False))[0]
    assert plain["masked_lm_weights"].numpy().sum() == 0  # nothing masked on disk
    n = len(plain["input_ids"])
    unmasked = pretraining_dataset(
        pattern, 1, 64, 10, training=False, dynamic_masking=True, vocab_size=8000
    )
    assert "token_boundary" not in next(iter(unmasked))
    # Two passes over the same examples, in order: new masks on the second.
    spec = {
        "input_ids": tf.io.FixedLenFeature([64], tf.int64),
        "input_mask": tf.io.FixedLenFeature([64], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([64], tf.int64),
        "token_boundary": tf.io.FixedLenFeature([64], tf.int64),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }
    parsed = tf.data.TFRecordDataset(sorted(out.glob("*.tfrecord"))).map(
        lambda r: {
            k: tf.cast(v, tf.int32)
            for k, v in tf.io.parse_single_example(r, spec).items()
        }
    )
    passes = list(
        dynamic_masking(
            parsed.repeat(2), vocab_size=8000, max_predictions_per_seq=10, seed=1
        )
    )
    first, second = passes[:n], passes[n:]
    fraction, changed = [], 0
    for a, b, original in zip(first, second, plain["input_ids"].numpy(), strict=True):
        length = int(a["input_mask"].numpy().sum())
        real = a["masked_lm_weights"].numpy() > 0
        positions = a["masked_lm_positions"].numpy()[real]
        assert (positions < length).all()
        # Labels are the original tokens; unmasked positions are untouched.
        assert np.array_equal(a["masked_lm_ids"].numpy()[real], original[positions])
        untouched = np.setdiff1d(np.arange(length), positions)
        assert np.array_equal(a["input_ids"].numpy()[untouched], original[untouched])
        fraction.append(real.sum() / length)
        changed += not np.array_equal(
            positions,
            b["masked_lm_positions"].numpy()[b["masked_lm_weights"].numpy() > 0],
        )
    assert abs(np.mean(fraction) - 0.15) < 0.03
    assert changed > 0.9 * n
