"""`HostTruncatedNormal`: Keras's truncated normal, drawn by NumPy under JAX."""

import keras
import numpy as np
import pytest

from albert_keras.layers.host_truncated_normal import HostTruncatedNormal

SHAPE = (400, 500)


def _draw(initializer, dtype="float32"):
    return keras.ops.convert_to_numpy(initializer(SHAPE, dtype=dtype))


def test_the_host_draw_has_keras_distribution(monkeypatch):
    # Keras's own draw (this backend's sampler) is the reference.
    reference = _draw(keras.initializers.TruncatedNormal(stddev=0.02, seed=3))
    assert _draw(HostTruncatedNormal(stddev=0.02, seed=3)) == pytest.approx(reference)
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")  # the host path
    host = _draw(HostTruncatedNormal(mean=0.1, stddev=0.02, seed=3))
    assert host.dtype == np.float32 and host.shape == SHAPE
    assert np.abs(host - 0.1).max() <= 0.04 + 1e-7  # cut at two stddev
    # 200,000 draws: the moments within a few standard errors of Keras's.
    assert abs(host.mean() - 0.1 - reference.mean()) < 2e-4
    assert abs(host.std() - reference.std()) < 2e-4
    # The truncated normal's stddev: 0.8796 of the normal's.
    assert host.std() == pytest.approx(0.02 * 0.8796, rel=0.01)
    # Seeded: the same values again, others for another seed.
    again = _draw(HostTruncatedNormal(mean=0.1, stddev=0.02, seed=3))
    np.testing.assert_array_equal(host, again)
    other = _draw(HostTruncatedNormal(mean=0.1, stddev=0.02, seed=4))
    assert np.abs(host - other).max() > 0.01
    half = _draw(HostTruncatedNormal(stddev=0.02, seed=3), dtype="bfloat16")
    assert keras.backend.standardize_dtype(half.dtype) == "bfloat16"


def test_it_round_trips_through_its_config():
    initializer = HostTruncatedNormal(stddev=0.05, seed=7)
    config = keras.saving.serialize_keras_object(initializer)
    again = keras.saving.deserialize_keras_object(config)
    assert type(again) is HostTruncatedNormal
    assert (again.stddev, again.seed) == (0.05, 7)
