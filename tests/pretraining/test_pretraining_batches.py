"""`PretrainingBatches`: the NumPy pipeline used where TensorFlow is absent."""

import numpy as np
import pytest

from albert_keras.pretraining.pretraining_batches import PretrainingBatches


def _features(n, length=8):
    ids = np.arange(n * length, dtype="int32").reshape(n, length)
    return {
        "input_ids": ids,
        "input_mask": np.ones((n, length), "int32"),
        "segment_ids": np.zeros((n, length), "int32"),
        "masked_lm_positions": np.ones((n, 2), "int32"),
        "masked_lm_ids": ids[:, :2],
        "masked_lm_weights": np.ones((n, 2), "float32"),
        "next_sentence_labels": np.arange(n, dtype="int32")[:, None] % 2,
    }


def test_a_held_out_pass_scores_every_instance_once_in_order():
    """As the TensorFlow pipeline: the last partial batch is kept, and a set
    smaller than one batch is one batch (it used to stop the run)."""
    for n, sizes in ((10, [4, 4, 2]), (3, [3])):
        features = _features(n)
        batches = PretrainingBatches(features, batch_size=4, keep_partial=True)
        seen = [x["token_ids"] for x, _ in batches]
        assert [len(ids) for ids in seen] == sizes
        np.testing.assert_array_equal(np.concatenate(seen), features["input_ids"])


def test_training_batches_stay_whole_and_seeded():
    features = _features(10)
    batches = PretrainingBatches(features, batch_size=4, steps=6, seed=0)
    rows = [x["token_ids"][:, 0] // 8 for x, _ in batches]
    assert [len(r) for r in rows] == [4] * 6  # 2 whole batches a pass
    again = PretrainingBatches(features, batch_size=4, steps=6, skip=3, seed=0)
    resumed = [x["token_ids"][:, 0] // 8 for x, _ in again]
    for a, b in zip(rows[3:], resumed, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="3 instances cannot fill one batch of 4"):
        PretrainingBatches(_features(3), batch_size=4, steps=1, seed=0)
    # Split over devices, held-out batches stay whole too.
    whole = PretrainingBatches(_features(10), batch_size=4)
    assert [len(x["token_ids"]) for x, _ in whole] == [4, 4]
    with pytest.raises(ValueError, match="3 held-out instances cannot fill"):
        PretrainingBatches(_features(3), batch_size=4)


def test_a_run_of_accumulated_updates_gets_n_batches_per_step():
    """`array_datasets` (the data of `pretrain` without TensorFlow) serves
    --steps x --gradient-accumulation-steps batches; a resume skips the
    batches of the updates done (`run_pretraining` passes step x N)."""
    from types import SimpleNamespace

    from albert_keras.pretraining.pretrain_arrays import array_datasets

    args = SimpleNamespace(
        steps=5, batch_size=2, seed=0, gradient_accumulation_steps=3, coordinator=None
    )
    train_dataset, _ = array_datasets(args, _features(10), None)
    assert len(train_dataset(0)) == 15
    resumed = train_dataset(2 * 3)  # after update 2
    assert len(resumed) == 9
    whole = [x["token_ids"] for x, _ in train_dataset(0)]
    np.testing.assert_array_equal(resumed[0][0]["token_ids"], whole[6])
