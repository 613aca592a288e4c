import numpy as np
import pytest
from albert_test_case import max_abs_diff, random_inputs, run_layer_test
from numpy_ops import f64, layer_norm, randomize

from albert_keras.layers import FactorizedEmbedding


@pytest.mark.parametrize("hidden", [24, 16])
def test_matches_numpy_reference(hidden):
    layer = FactorizedEmbedding(50, 16, hidden, max_sequence_length=12)
    x = random_inputs(batch=2, length=9, vocab=50)
    layer(x["token_ids"], x["segment_ids"])
    randomize(layer)
    out = run_layer_test(layer, (x["token_ids"], x["segment_ids"]))
    emb = (
        f64(layer.word_embeddings)[x["token_ids"]]
        + f64(layer.token_type_embeddings)[x["segment_ids"]]
        + f64(layer.position_embeddings)[None, :9]
    )
    emb = layer_norm(emb, f64(layer.layer_norm.gamma), f64(layer.layer_norm.beta))
    if hidden == 16:
        # E == H: no projection at all, like the official graph.
        assert layer.projection is None
        expected = emb
    else:
        expected = emb @ f64(layer.projection.kernel) + f64(layer.projection.bias)
    assert max_abs_diff(out, expected) < 1e-5


def test_sequence_longer_than_positions_is_a_clear_error():
    layer = FactorizedEmbedding(50, 8, 8, max_sequence_length=4)
    ids = np.zeros((1, 6), "int32")
    with pytest.raises(ValueError, match="Sequence length 6 exceeds"):
        layer(ids, ids)
