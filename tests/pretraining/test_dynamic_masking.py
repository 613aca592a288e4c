"""Dynamic masking in tf.data: valid official features, new masks every pass."""

import gzip

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.pretraining.dynamic_masking import dynamic_masking
from albert_keras.pretraining.pretraining_data import create_pretraining_data
from albert_keras.pretraining.pretraining_dataset import (
    feature_spec,
    pretraining_dataset,
)

OFFICIAL_KEYS = {
    "input_ids",
    "input_mask",
    "segment_ids",
    "masked_lm_positions",
    "masked_lm_ids",
    "masked_lm_weights",
    "next_sentence_labels",
}


@pytest.fixture(scope="module")
def unmasked(tmp_path_factory):
    from albert_keras.sample_text import CORPUS_PATH

    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(60_000).rsplit("\n\n", 1)[0]
    folder = tmp_path_factory.mktemp("unmasked")
    (folder / "text.txt").write_text(text + "\n", encoding="utf-8")
    stats = create_pretraining_data(
        [str(folder / "text.txt")],
        str(folder / "records.tfrecord"),
        max_seq_length=64,
        max_predictions_per_seq=10,
        masked_lm_prob=0.0,
        split_sentences=True,
        seed=5,
        verbose=False,
    )
    return str(folder / "records.tfrecord"), stats


def parsed(pattern):
    spec = feature_spec(64, 10, masked=False)
    return tf.data.TFRecordDataset([pattern]).map(
        lambda r: {
            k: tf.cast(v, tf.int32)
            for k, v in tf.io.parse_single_example(r, spec).items()
        }
    )


def test_unmasked_records_on_disk(unmasked):
    pattern, stats = unmasked
    assert stats["masked"] == 0
    plain = next(iter(pretraining_dataset(pattern, 10_000, 64, 10, training=False)))
    assert plain["masked_lm_weights"].numpy().sum() == 0
    assert not (plain["input_ids"].numpy() == 4).any()  # no [MASK] written


def test_dataset_with_dynamic_masking_yields_official_features(unmasked):
    pattern, stats = unmasked
    data = pretraining_dataset(
        pattern, 16, 64, 10, training=False, dynamic_masking=True, vocab_size=8000
    )
    originals = next(iter(parsed(pattern).batch(10_000)))["input_ids"].numpy()
    fractions, seen = [], 0
    for batch in data:
        assert set(batch) == OFFICIAL_KEYS
        assert batch["masked_lm_positions"].dtype == tf.int32
        assert batch["masked_lm_weights"].dtype == tf.float32
        ids = batch["input_ids"].numpy()
        original = originals[seen : seen + len(ids)]
        seen += len(ids)
        for row in range(len(ids)):
            real = batch["masked_lm_weights"].numpy()[row] > 0
            positions = batch["masked_lm_positions"].numpy()[row][real]
            labels = batch["masked_lm_ids"].numpy()[row][real]
            length = batch["input_mask"].numpy()[row].sum()
            assert (positions > 0).all() and (positions < length).all()
            assert np.array_equal(labels, original[row, positions])
            rest = np.setdiff1d(np.arange(64), positions)
            assert np.array_equal(ids[row, rest], original[row, rest])
            fractions.append(real.sum() / length)
    assert seen == stats["instances"]
    assert abs(np.mean(fractions) - 0.15) < 0.02
    # The batches feed `fit` through the pretrainer's own mapping.
    from albert_keras.models.albert_pretrainer import AlbertPretrainer

    x, y = AlbertPretrainer.features_to_xy(batch)
    assert x["mask_positions"].shape[1] == 10 and y["sop_labels"].shape.rank == 1


def test_new_masks_every_pass_and_reproducible(unmasked):
    pattern, stats = unmasked
    n = stats["instances"]

    def positions(data):
        return [
            tuple(f["masked_lm_positions"].numpy()[f["masked_lm_weights"].numpy() > 0])
            for f in data
        ]

    two_passes = positions(
        dynamic_masking(parsed(pattern).repeat(2), 8000, max_predictions_per_seq=10)
    )
    first, second = two_passes[:n], two_passes[n:]
    changed = sum(a != b for a, b in zip(first, second, strict=True))
    assert changed > 0.9 * n
    again = positions(
        dynamic_masking(parsed(pattern), 8000, max_predictions_per_seq=10)
    )
    assert again == first
    other_seed = positions(
        dynamic_masking(parsed(pattern), 8000, max_predictions_per_seq=10, seed=1)
    )
    assert other_seed != first
    # Batched elements are masked a batch at a time, with the same rules.
    batched = dynamic_masking(
        parsed(pattern).batch(8), 8000, max_predictions_per_seq=10
    )
    batch = next(iter(batched))
    assert batch["masked_lm_positions"].shape == (8, 10)
    assert (batch["masked_lm_weights"].numpy().sum(axis=1) >= 1).all()


def test_dynamic_masking_needs_a_vocabulary_size(unmasked):
    with pytest.raises(ValueError, match="vocab_size"):
        pretraining_dataset(unmasked[0], 4, 64, 10, dynamic_masking=True)
    with pytest.raises(ValueError, match="No pretraining records match"):
        pretraining_dataset("/nonexistent/*.tfrecord", 4, 64, 10)
