"""`AlbertSquadV2` called on NumPy inputs without `start_positions` (models.md:
start positions are for training only).

The filler start position was a tensor, which Keras refuses beside NumPy
inputs ("you cannot mix tensors and non-tensors").
"""

import numpy as np
from albert_test_case import micro_config

from albert_keras import AlbertBackbone
from albert_keras.models import AlbertSquadV2


def test_numpy_inputs_predict_without_start_positions():
    model = AlbertSquadV2(AlbertBackbone(micro_config()))
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(5, 60, (2, 8)).astype("int32"),
        "segment_ids": np.zeros((2, 8), "int32"),
        "padding_mask": np.ones((2, 8), "int32"),
        "p_mask": np.zeros((2, 8), "int32"),
    }
    called = model(inputs)
    predicted = model.predict(inputs, verbose=0)
    assert called["cls_logits"].shape[0] == 2
    for name, value in predicted.items():
        np.testing.assert_allclose(np.asarray(called[name]), value, atol=1e-5)
