import numpy as np
import pytest
from albert_test_case import max_abs_diff, random_inputs, run_layer_test
from numpy_ops import attention, f64, randomize

from albert_keras.layers import AlbertAttention


def test_matches_numpy_reference_with_padding():
    layer = AlbertAttention(32, 4, name="attention")
    x = np.random.default_rng(1).normal(size=(3, 7, 32)).astype("float32")
    mask = random_inputs(batch=3, length=7)["padding_mask"]
    layer(x, padding_mask=mask)
    randomize(layer)
    out = run_layer_test(layer, (x,), {"padding_mask": mask})
    assert max_abs_diff(out, attention(layer, f64(x), mask)) < 1e-5


def test_query_positions_give_those_rows_of_the_reference():
    layer = AlbertAttention(32, 4)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 9, 32)).astype("float32")
    mask = random_inputs(batch=3, length=9)["padding_mask"]
    layer(x, padding_mask=mask)
    randomize(layer, seed=3)
    positions = np.array([[0, 4, 4, 8], [0, 1, 2, 3], [0, 7, 6, 0]], "int32")
    out = np.asarray(layer(x, padding_mask=mask, query_positions=positions))
    assert out.shape == (3, 4, 32)
    full = attention(layer, f64(x), mask)
    expected = np.take_along_axis(full, positions[:, :, None], axis=1)
    assert max_abs_diff(out, expected) < 1e-5


def test_padded_keys_do_not_change_real_positions():
    layer = AlbertAttention(16, 2)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 6, 16)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 0, 0]])
    out = np.asarray(layer(x, padding_mask=mask))
    x2 = x.copy()
    x2[:, 4:] = rng.normal(size=(1, 2, 16))  # change only the padding
    out2 = np.asarray(layer(x2, padding_mask=mask))
    assert max_abs_diff(out[:, :4], out2[:, :4]) < 1e-6


def test_heads_must_divide_hidden():
    with pytest.raises(ValueError, match="hidden_size=30, num_heads=4"):
        AlbertAttention(30, 4)


@pytest.mark.parametrize("heads", [0, -2, 2.0])
def test_heads_must_be_a_positive_integer(heads):
    """`num_heads=0` failed with "integer modulo by zero"."""
    with pytest.raises(
        ValueError, match=rf"`num_heads` must be a positive integer.*{heads}"
    ):
        AlbertAttention(16, heads)


def test_lora_and_int8_kernels_still_match_the_reference():
    # Plain kernels are concatenated into one [H, 3H] product; a LoRA or an
    # int8-quantized projection must still give its own effective kernel.
    layer = AlbertAttention(32, 4)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 6, 32)).astype("float32")
    mask = np.ones((2, 6), "int32")
    layer(x, padding_mask=mask)
    randomize(layer, seed=4)
    layer.key.enable_lora(2)
    layer.key.lora_kernel_b.assign(rng.normal(0.0, 0.3, (2, 32)))
    expected = attention(layer, f64(x), mask)  # `key.kernel` includes the LoRA
    assert max_abs_diff(layer(x, padding_mask=mask), expected) < 1e-5
    positions = np.array([[0, 3], [5, 1]], "int32")
    rows = np.asarray(layer(x, padding_mask=mask, query_positions=positions))
    assert (
        max_abs_diff(rows, np.take_along_axis(expected, positions[..., None], 1)) < 1e-5
    )

    quantized = AlbertAttention(32, 4)
    quantized(x, padding_mask=mask)
    randomize(quantized, seed=4)
    expected = attention(quantized, f64(x), mask)
    for dense in (quantized.query, quantized.key, quantized.value):
        dense.quantize("int8")  # as `model.quantize("int8")` does
    assert quantized.query.quantization_mode == "int8"
    out = np.asarray(quantized(x, padding_mask=mask))
    assert max_abs_diff(out, expected) < 0.05  # int8 rounding, not garbage


def test_three_projections_match_the_reference(monkeypatch):
    """`FORCE_QKV_PROJECTION = "three"` (a benchmark variant): Q, K, V as three
    products give the numbers of the one concatenated product."""
    from albert_keras.layers import albert_attention

    layer = AlbertAttention(32, 4)
    x = np.random.default_rng(4).normal(size=(2, 6, 32)).astype("float32")
    mask = random_inputs(batch=2, length=6)["padding_mask"]
    layer(x, padding_mask=mask)
    randomize(layer, seed=4)
    monkeypatch.setattr(albert_attention, "FORCE_QKV_PROJECTION", "three")
    out = np.asarray(layer(x, padding_mask=mask))
    assert max_abs_diff(out, attention(layer, f64(x), mask)) < 1e-5
