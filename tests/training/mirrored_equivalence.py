"""Run in a subprocess: one device vs MirroredStrategy on 2 logical CPUs.

Splits the CPU into two logical devices (as Keras's own distribute tests do),
trains the same pretrainer from the same weights on the same global batches,
once on one device and once mirrored, both with `jit_compile=True`, with each
optimizer named on the command line (default: sgd and lamb, one process for
both: TensorFlow's start-up is paid once), and prints, per optimizer, the
per-step losses and final weights' max abs difference as JSON.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The compile is most of this run: XLA without LLVM's optimizations (both
# runs of each pair are compiled alike).
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_backend_optimization_level=0"]
).strip()

import tensorflow as tf  # noqa: E402

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2
)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from albert_test_case import micro_config, official_features  # noqa: E402

from albert_keras import AlbertBackbone, AlbertPretrainer  # noqa: E402
from albert_keras.training import create_optimizer, get_strategy  # noqa: E402

# One layer: the size is no part of the equivalence, and XLA compiles each
# step four times (two optimizers, one device and mirrored).
CONFIG = micro_config(50, num_hidden_layers=1)
STEPS, BATCH, LENGTH = 4, 8, 12
OPTIMIZERS = sys.argv[1:] or ["sgd", "lamb"]


def dataset():
    features = official_features(STEPS * BATCH, LENGTH)
    features["masked_lm_weights"][::3, -1] = 0.0  # uneven real predictions per replica
    return (
        tf.data.Dataset.from_tensor_slices(features)
        .batch(BATCH)
        .map(AlbertPretrainer.features_to_xy)
    )


def train(strategy, initial_weights, optimizer_name):
    with strategy.scope():
        model = AlbertPretrainer(AlbertBackbone(CONFIG))
        # LAMB normalises each update, so a gradient component at rounding
        # level can flip its step; SGD shows the gradients themselves agree.
        optimizer = (
            create_optimizer("lamb", 1e-2, 100, 0)
            if optimizer_name == "lamb"
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


def compare(optimizer_name, initial_weights, mirrored):
    one_losses, one_weights = train(
        get_strategy("one_device"), initial_weights, optimizer_name
    )
    mir_losses, mir_weights = train(mirrored, initial_weights, optimizer_name)
    pairs = zip(one_weights, mir_weights, strict=True)
    return {
        "replicas": mirrored.num_replicas_in_sync,
        "one_device": one_losses,
        "mirrored": mir_losses,
        "weights_max_abs_diff": max(float(np.max(np.abs(a - b))) for a, b in pairs),
    }


keras.utils.set_random_seed(0)
initial = AlbertPretrainer(AlbertBackbone(CONFIG)).get_weights()
mirrored = get_strategy("mirrored")
json.dump({name: compare(name, initial, mirrored) for name in OPTIMIZERS}, sys.stdout)
