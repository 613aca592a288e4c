import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff

from albert_keras.layers.position_gather import take_positions


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_take_positions_matches_numpy_and_keeps_dtype(dtype):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 6, 5)).astype("float32")
    positions = np.array([[5, 0, 0], [2, 3, 5]], "int32")
    out = take_positions(keras.ops.cast(x, dtype), positions)
    assert keras.backend.standardize_dtype(out.dtype) == dtype
    expected = np.stack([x[b, positions[b]] for b in range(2)])
    if dtype == "bfloat16":
        # The bfloat16 input's rows exactly: the float32 detour adds nothing.
        expected = keras.ops.convert_to_numpy(
            keras.ops.cast(keras.ops.cast(expected, "bfloat16"), "float32")
        )
    assert max_abs_diff(keras.ops.cast(out, "float32"), expected) == 0.0
