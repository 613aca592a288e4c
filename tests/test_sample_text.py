"""`sample_batch`: the embedded corpus packed for any vocabulary size."""

import numpy as np

from albert_keras.sample_text import sample_batch


def test_pieces_past_a_small_vocabulary_become_unknown():
    full, _ = sample_batch(4, 64, vocab_size=30000)
    small, _ = sample_batch(4, 64, vocab_size=1000)  # albert_tiny
    assert int(full["token_ids"].max()) >= 1000  # the embedded model's 8000 pieces
    assert int(small["token_ids"].max()) < 1000
    mapped = (full["token_ids"] >= 1000) & (full["padding_mask"] == 1)
    np.testing.assert_array_equal(small["token_ids"][mapped], 1)  # <unk>
    kept = ~mapped
    np.testing.assert_array_equal(small["token_ids"][kept], full["token_ids"][kept])
    np.testing.assert_array_equal(small["padding_mask"], full["padding_mask"])
