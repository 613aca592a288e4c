import numpy as np
from albert_test_case import max_abs_diff, random_inputs
from numpy_ops import ACT, f64, layer_norm, randomize

from albert_keras.layers import FactorizedEmbedding, MaskedLMHead, SentenceOrderHead


def test_masked_lm_head_is_tied_to_word_embeddings():
    embedding = FactorizedEmbedding(60, 8, 16)
    x = random_inputs(batch=2, length=6, vocab=60)
    embedding(x["token_ids"], x["segment_ids"])
    head = MaskedLMHead(embedding, activation="relu")
    seq = np.random.default_rng(0).normal(size=(2, 6, 16)).astype("float32")
    positions = np.array([[0, 3], [5, 1]], "int32")
    head(seq, positions)
    randomize(embedding, seed=1)
    randomize(head, seed=2)
    out = np.asarray(head(seq, positions))
    gathered = np.take_along_axis(f64(seq), positions[:, :, None], axis=1)
    t = ACT["relu"](gathered @ f64(head.dense.kernel) + f64(head.dense.bias))
    t = layer_norm(t, f64(head.layer_norm.gamma), f64(head.layer_norm.beta))
    expected = t @ f64(embedding.word_embeddings).T + f64(head.output_bias)
    assert out.shape == (2, 2, 60)
    assert max_abs_diff(out, expected) < 1e-5
    # Tied: the head uses the embedding's table itself and owns only its
    # transform, LayerNorm and output bias.
    embedding_ids = {id(w) for w in embedding.weights}
    own = [w for w in head.weights if id(w) not in embedding_ids]
    assert len(own) == 5
    assert sum(int(np.prod(w.shape)) for w in own) == 16 * 8 + 8 + 2 * 8 + 60


def test_sentence_order_head():
    head = SentenceOrderHead(16)
    pooled = np.random.default_rng(0).normal(size=(3, 16)).astype("float32")
    head(pooled)
    randomize(head)
    expected = f64(pooled) @ f64(head.output_weights).T + f64(head.output_bias)
    assert max_abs_diff(head(pooled), expected) < 1e-5
