"""AlbertSquadV2 as a Keras model: fit, predict without start positions, save, bf16."""

import keras
import numpy as np
import pytest
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, AlbertSquadV2


def _data(n=32, length=16, seed=0):
    rng = np.random.default_rng(seed)
    x = {
        "token_ids": rng.integers(5, 60, (n, length)).astype("int32"),
        "segment_ids": np.zeros((n, length), "int32"),
        "padding_mask": np.ones((n, length), "int32"),
        "p_mask": np.zeros((n, length), "int32"),
    }
    x["p_mask"][:, 1:4] = 1
    start = rng.integers(4, length - 2, n).astype("int32")
    x["start_positions"] = start
    y = {
        "start_log_probs": start,
        "end_log_probs": start + 1,
        "cls_logits": (rng.random(n) < 0.3).astype("float32"),
    }
    return x, y


def test_fit_lowers_the_official_loss_and_predict_needs_no_start():
    keras.utils.set_random_seed(0)
    model = AlbertSquadV2(AlbertBackbone(micro_config(vocab_size=60)), 3, 2)
    losses, weights = AlbertSquadV2.official_losses()
    model.compile(
        optimizer=keras.optimizers.Adam(5e-3),
        loss=losses,
        loss_weights=weights,
        jit_compile=True,
    )
    x, y = _data()
    history = model.fit(x, y, batch_size=8, epochs=8, verbose=0).history["loss"]
    assert history[-1] < 0.8 * history[0], history
    without = {k: v for k, v in x.items() if k != "start_positions"}
    out = model.predict(without, verbose=0)
    assert out["end_top_index"].shape == (32, 6)
    # The beam never starts or ends where p_mask forbids it.
    assert not np.isin(out["start_top_index"], [1, 2, 3]).any()
    assert not np.isin(out["end_top_index"], [1, 2, 3]).any()
    # Start log-probabilities are normalized over the allowed positions.
    np.testing.assert_allclose(np.exp(out["start_log_probs"]).sum(-1), 1, atol=1e-5)
    # End log-probs at inference condition on start 0 when none is given.
    zeros = model.predict({**x, "start_positions": 0 * x["start_positions"]}, verbose=0)
    np.testing.assert_allclose(out["end_log_probs"], zeros["end_log_probs"], atol=1e-6)


def test_training_without_start_positions_is_refused():
    # fit used to fill in start 0, training the end head on the wrong start.
    model = AlbertSquadV2(AlbertBackbone(micro_config(vocab_size=60)), 3, 2)
    losses, weights = AlbertSquadV2.official_losses()
    model.compile(optimizer="adam", loss=losses, loss_weights=weights)
    x, y = _data()
    without = {k: v for k, v in x.items() if k != "start_positions"}
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match="needs `start_positions`"):
        model.fit(without, y, batch_size=8, epochs=1, verbose=0)
    assert all((a == b).all() for a, b in zip(before, model.get_weights(), strict=True))
    with pytest.raises(ValueError, match="needs `start_positions`"):
        model(without, training=True)
    assert model(without)["end_log_probs"].shape == (32, 16)


def test_save_load_and_mixed_precision(tmp_path):
    model = AlbertSquadV2(AlbertBackbone(micro_config(vocab_size=60)), 2, 2)
    x, _ = _data(n=4)
    path = str(tmp_path / "squad_v2.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    first, second = model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])
    assert loaded.start_n_top == 2 and loaded.squad_v2_head.end_n_top == 2
    half = AlbertSquadV2(
        AlbertBackbone(micro_config(vocab_size=60), dtype="mixed_bfloat16"), 2, 2
    )
    half.set_weights(model.get_weights())
    out = half.predict(x, verbose=0)
    assert out["start_log_probs"].dtype == np.float32
    assert np.abs(out["cls_logits"] - first["cls_logits"]).max() < 0.05


@pytest.mark.parametrize(
    "beam", [dict(start_n_top=0), dict(end_n_top=-1), dict(start_n_top=2.5)]
)
def test_an_empty_or_fractional_beam_is_refused(beam):
    """A beam of 0 was accepted and answered no question at all."""
    from albert_keras.tasks import SquadTask

    backbone = AlbertBackbone(micro_config(50))
    name = next(iter(beam))
    with pytest.raises(ValueError, match=f"`{name}` is a size of the inference beam"):
        AlbertSquadV2(backbone, **beam)
    with pytest.raises(ValueError, match=f"`{name}` is a size of the inference beam"):
        SquadTask(**beam)
    assert AlbertSquadV2(backbone, start_n_top=1, end_n_top=1).start_n_top == 1
