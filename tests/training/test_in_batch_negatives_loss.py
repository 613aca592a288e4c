"""`InBatchNegativesLoss` against a loop-by-loop NumPy reference, and
`AlbertBiEncoder`: its vectors are `AlbertEmbeddingTextModel`'s."""

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, run_model_test

from albert_keras import AlbertBackbone, AlbertConfig
from albert_keras.models import (
    AlbertBiEncoder,
    AlbertEmbeddingTextModel,
    with_tokenizer,
)
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers import AlbertTokenizer
from albert_keras.tokenizers.albert_packer import AlbertPacker
from albert_keras.training import InBatchNegativesLoss


def _unit(rng, *shape):
    v = rng.normal(size=shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _reference(y, ids, scale, symmetric):
    """Row by row: anchor i's softmax over every positive and negative of the
    batch, other anchors' copies of its positive (same id) left out."""
    batch, texts, _ = y.shape
    candidates = [(j, 1) for j in range(batch)]
    candidates += [(j, s) for s in range(2, texts) for j in range(batch)]
    costs = []
    for i in range(batch):
        logits = [
            scale * y[i, 0] @ y[j, s]
            for j, s in candidates
            if not (s == 1 and j != i and ids[j] == ids[i])
        ]
        own = scale * y[i, 0] @ y[i, 1]
        cost = np.log(np.sum(np.exp(logits))) - own
        if symmetric:
            back = [
                scale * y[i, 1] @ y[j, 0]
                for j in range(batch)
                if j == i or ids[j] != ids[i]
            ]
            cost = (cost + np.log(np.sum(np.exp(back))) - own) / 2
        costs.append(cost)
    return np.mean(costs)


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("texts", [2, 4])
def test_loss_equals_the_reference(texts, symmetric):
    """Random unit vectors, hard negatives or none, two anchors sharing a
    positive: within 2e-5 of the reference, and the shared positive is not
    counted as a negative (the loss without the ids differs)."""
    rng = np.random.default_rng(texts)
    y = _unit(rng, 6, texts, 16).astype("float32")
    y[3, 1] = y[1, 1]  # anchors 1 and 3 share their positive
    ids = np.array([0, 1, 2, 1, 3, 4])
    loss = InBatchNegativesLoss(scale=7.0, symmetric=symmetric)
    found = float(loss(ids, y))
    expected = _reference(y.astype("float64"), ids, 7.0, symmetric)
    assert abs(found - expected) < 2e-5, (found, expected)
    unmasked = float(loss(np.arange(6), y))
    assert abs(unmasked - found) > 1e-3


def test_loss_config_and_bad_scale():
    loss = InBatchNegativesLoss(scale=5, symmetric=True)
    again = InBatchNegativesLoss.from_config(loss.get_config())
    assert (again.scale, again.symmetric) == (5.0, True)
    with pytest.raises(ValueError, match="`scale` must be a positive number"):
        InBatchNegativesLoss(scale=0)


def _backbone():
    keras.utils.set_random_seed(0)
    return AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=8000))


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_bi_encoder_vectors_are_the_text_models(pooling):
    """Each text of each example, packed alone: the bi-encoder's unit vector
    is the one `AlbertEmbeddingTextModel(normalize=True)` gives that text."""
    texts = [
        ["Emma was handsome.", "She was clever and rich."],
        ["It rained.", "The rain fell all day long on the house."],
    ]
    backbone = _backbone()
    model = AlbertBiEncoder(backbone, num_texts=2, pooling=pooling)
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    flat = [t for pair in texts for t in pair]
    packed = AlbertPacker(16)(tokenizer(flat))
    x = {k: np.asarray(v).reshape(2, 2, 16) for k, v in packed.items()}
    found = np.asarray(model.predict(x, verbose=0)["embeddings"])
    text_model = AlbertEmbeddingTextModel(
        backbone, tokenizer, 16, pooling=pooling, normalize=True
    )
    expected = text_model.embed(flat).reshape(2, 2, -1)
    assert max_abs_diff(found, expected) < 1e-5
    served = with_tokenizer(model, tokenizer, 16)  # its pooling, normalized
    assert max_abs_diff(served.embed(flat).reshape(2, 2, -1), expected) < 1e-6
    run_model_test(model, x, np.array([0, 1]), InBatchNegativesLoss(), atol=1e-6)


def test_bi_encoder_refuses_bad_arguments():
    backbone = _backbone()
    with pytest.raises(ValueError, match="`num_texts` must be an integer of at least"):
        AlbertBiEncoder(backbone, num_texts=1)
    with pytest.raises(ValueError, match="`pooling` must be one of"):
        AlbertBiEncoder(backbone, pooling="sum")


def test_bi_encoder_init_says_there_is_no_head():
    """`--init` a backbone or a bi-encoder: the log says the backbone is
    reused, and not that a new head was made."""
    from albert_keras.models.weight_copy import reuse_task_head

    backbone = _backbone()
    model = AlbertBiEncoder(backbone)
    assert reuse_task_head(model, backbone) == (
        "backbone reused (AlbertBiEncoder has no head)"
    )
