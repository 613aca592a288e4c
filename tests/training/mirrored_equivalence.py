"""Run in a subprocess: one device vs MirroredStrategy on 2 logical CPUs.

Splits the CPU into two logical devices (as Keras's own distribute tests do),
trains the same pretrainer from the same weights on the same global batches,
once on one device and once mirrored, both with `jit_compile=True`, and prints
the per-step losses and final weights' max abs difference as JSON.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2
)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer  # noqa: E402
from albert_keras.training import create_optimizer, get_strategy  # noqa: E402

CONFIG = AlbertConfig(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
)
STEPS, BATCH, LENGTH, PREDICTIONS = 4, 8, 12, 3
OPTIMIZER = sys.argv[1] if len(sys.argv) > 1 else "sgd"


def dataset():
    rng = np.random.default_rng(0)
    n = STEPS * BATCH
    weights = np.ones((n, PREDICTIONS), "float32")
    weights[::3, -1] = 0.0  # uneven real predictions per replica
    features = {
        "input_ids": rng.integers(0, 50, (n, LENGTH)).astype("int32"),
        "input_mask": np.ones((n, LENGTH), "int32"),
        "segment_ids": np.zeros((n, LENGTH), "int32"),
        "masked_lm_positions": rng.integers(0, LENGTH, (n, PREDICTIONS)).astype(
            "int32"
        ),
        "masked_lm_ids": rng.integers(0, 50, (n, PREDICTIONS)).astype("int32"),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, (n, 1)).astype("int32"),
    }
    return (
        tf.data.Dataset.from_tensor_slices(features)
        .batch(BATCH)
        .map(AlbertPretrainer.features_to_xy)
    )


def train(strategy, initial_weights):
    with strategy.scope():
        model = AlbertPretrainer(AlbertBackbone(CONFIG))
        # LAMB normalises each update, so a gradient component at rounding
        # level can flip its step; SGD shows the gradients themselves agree.
        optimizer = (
            create_optimizer("lamb", 1e-2, 100, 0)
            if OPTIMIZER == "lamb"
            else keras.optimizers.SGD(0.5)
        )
        model.compile(optimizer=optimizer, jit_compile=True)
    model.set_weights(initial_weights)
    losses = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            losses.append(float(logs["loss"]))

    model.fit(dataset(), epochs=1, verbose=0, callbacks=[Record()])
    return losses, model.get_weights()


keras.utils.set_random_seed(0)
initial = AlbertPretrainer(AlbertBackbone(CONFIG)).get_weights()
mirrored = get_strategy("mirrored")
one_losses, one_weights = train(get_strategy("one_device"), initial)
mir_losses, mir_weights = train(mirrored, initial)
diff = max(
    float(np.max(np.abs(a - b))) for a, b in zip(one_weights, mir_weights, strict=True)
)
json.dump(
    {
        "replicas": mirrored.num_replicas_in_sync,
        "one_device": one_losses,
        "mirrored": mir_losses,
        "weights_max_abs_diff": diff,
    },
    sys.stdout,
)
