"""Embedding gradients are summed before the optimizer update (TensorFlow).

On TensorFlow an embedding lookup's gradient is a `tf.IndexedSlices` with a
row per token, a table row repeated for each use. Keras 3's Adam, AdamW and
LAMB square those rows one by one (the second moment got the sum of squares,
not the square of the sum) and clip by the same wrong norm: fine-tuning's
word and segment tables and pretraining's segment table were updated other
than the official optimizers (and JAX, torch) update them. `DenseGradients`
sums the rows first; Keras' own optimizers stay as the failing reference.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.training.optimizers import create_optimizer

OPTIMIZERS = ["lamb", "lamb_official", "adamw", "adamw_official"]


def _three_steps(optimizer, gradient):
    variable = keras.Variable(np.zeros((2, 1), "float32"))
    for _ in range(3):
        optimizer.apply_gradients([(gradient, variable)])
    return keras.ops.convert_to_numpy(variable)


def _repeated_row():
    """Row 0 of a 2-row table looked up twice, as a lookup's gradient is."""
    return tf.IndexedSlices(
        tf.constant([[1.0], [1.0]]), tf.constant([0, 0]), tf.constant([2, 1])
    )


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_repeated_row_updates_as_its_summed_gradient(name):
    sparse = _three_steps(create_optimizer(name, 0.1, 10, 0), _repeated_row())
    dense = _three_steps(create_optimizer(name, 0.1, 10, 0), tf.constant([[2.0], [0]]))
    assert np.abs(sparse - dense).max() < 1e-7


@pytest.mark.parametrize("kind", [keras.optimizers.Adam, keras.optimizers.Lamb])
def test_keras_alone_updates_a_repeated_row_otherwise(kind):
    # The reference fails: what the tests above guard against.
    sparse = _three_steps(kind(learning_rate=0.1), _repeated_row())
    dense = _three_steps(kind(learning_rate=0.1), tf.constant([[2.0], [0.0]]))
    assert np.abs(sparse - dense).max() > 0.05


def _classifier_and_data():
    keras.utils.set_random_seed(3)
    config = micro_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = AlbertClassifier(AlbertBackbone(config), 2, dropout=0.0)
    rng = np.random.default_rng(0)
    x = {  # 8 rows of 12 tokens from 6 words: every row of a table repeats
        "token_ids": rng.integers(5, 11, (8, 12)).astype("int32"),
        "segment_ids": np.zeros((8, 12), "int32"),
        "padding_mask": np.ones((8, 12), "int32"),
    }
    return model, x, np.arange(8) % 2


def _fitted(optimizer):
    """The weights after two `fit` steps (the product's path)."""
    model, x, y = _classifier_and_data()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizer, loss=loss, jit_compile=False)
    model.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    return [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]


def _dense_reference(optimizer):
    """Two steps by hand, every gradient made dense before the optimizer."""
    model, x, y = _classifier_and_data()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizer, loss=loss)  # for compute_loss
    for rows in (slice(0, 4), slice(4, 8)):
        batch = {k: v[rows] for k, v in x.items()}
        with tf.GradientTape() as tape:
            predicted = model(batch, training=True)
            value = model.compute_loss(batch, y[rows], predicted, training=True)
        grads = tape.gradient(value, model.trainable_weights)
        grads = [tf.convert_to_tensor(g) for g in grads]
        optimizer.apply_gradients(zip(grads, model.trainable_weights, strict=True))
    return [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]


def _max_diff(a, b):
    return max(float(np.abs(p - q).max()) for p, q in zip(a, b, strict=True))


def test_fine_tuning_updates_the_tables_as_with_dense_gradients():
    ours = _fitted(create_optimizer("adamw", 1e-2, 2, 0))
    reference = _dense_reference(create_optimizer("adamw", 1e-2, 2, 0))
    assert _max_diff(ours, reference) < 1e-6
    keras_alone = _fitted(
        keras.optimizers.AdamW(
            1e-2, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
        )
    )
    assert _max_diff(keras_alone, reference) > 1e-4
