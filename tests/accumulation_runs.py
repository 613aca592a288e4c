"""Gradient accumulation against one large batch, on any Keras backend.

`accumulation_differences` fits the same tiny classifier twice from the same
weights: once with batches of 16, once with batches of 8 (or 4) accumulated
2 (or 4) times per update, both with `create_optimizer`'s warmup and decay.
Without dropout the two are the same computation up to float32 rounding, so
the largest weight difference is the check. The tests on TensorFlow import
it; `tests/models/backend_checks.py` runs it on JAX and torch.
"""

import keras
import numpy as np
from albert_test_case import micro_config

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.training.optimizers import NO_DECAY, create_optimizer
from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay

ROWS, LENGTH, RATE, UPDATES = 64, 12, 3e-3, 4


def _data():
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(5, 60, (ROWS, LENGTH)).astype("int32"),
        "segment_ids": np.zeros((ROWS, LENGTH), "int32"),
        "padding_mask": np.ones((ROWS, LENGTH), "int32"),
    }
    return x, (x["token_ids"][:, 0] > 30).astype("int32")


def fitted_weights(optimizer, batch_size, jit_compile=False):
    """{path: array} after one epoch of the 64 rows, in order, from seed 1."""
    keras.utils.set_random_seed(1)
    config = micro_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = AlbertClassifier(AlbertBackbone(config), 2, dropout=0.0)
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=jit_compile,
    )
    x, y = _data()
    model.fit(x, y, batch_size=batch_size, shuffle=False, verbose=0)
    weights = {v.path: keras.ops.convert_to_numpy(v) for v in model.weights}
    return weights, int(keras.ops.convert_to_numpy(optimizer.iterations))


def _difference(a, b):
    return float(max(np.abs(a[k] - b[k]).max() for k in a))


def keras_schedule_optimizer(name, steps):
    """Keras' accumulation alone: its schedule sees batches, not updates."""
    schedule = WarmupPolynomialDecay(RATE, decay_steps=UPDATES, warmup_steps=1)
    kind = {"adamw": keras.optimizers.AdamW, "lamb": keras.optimizers.Lamb}[name]
    optimizer = kind(
        learning_rate=schedule,
        weight_decay=0.01,
        epsilon=1e-6,
        global_clipnorm=1.0,
        gradient_accumulation_steps=steps,
    )
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    return optimizer


def accumulation_differences(
    cases=(("adamw", 2, 4), ("lamb", 2)), jit_compile=False, keras_schedule=True
):
    """{name: {"2x8", "4x4", ...: max diff, "updates": [...]}}; the first name
    also gets "keras_schedule_2x8" (Keras' accumulation, undivided schedule)
    if `keras_schedule`.

    `cases`: (optimizer name, accumulation steps, ...) each. Without XLA by
    default: on TensorFlow each XLA compile costs seconds, and the check is
    the accumulation, not the compiler.
    """
    report = {}
    for name, *counts in cases:
        large, updates = fitted_weights(
            create_optimizer(name, RATE, UPDATES, 1), ROWS // UPDATES, jit_compile
        )
        entry = {"updates": [updates]}
        for steps in counts:
            optimizer = create_optimizer(
                name, RATE, UPDATES, 1, gradient_accumulation_steps=steps
            )
            small, updates = fitted_weights(
                optimizer, ROWS // UPDATES // steps, jit_compile
            )
            entry[f"{steps}x{ROWS // UPDATES // steps}"] = _difference(large, small)
            entry["updates"].append(updates)
        if keras_schedule and not report:
            keras_only, _ = fitted_weights(
                keras_schedule_optimizer(name, 2), ROWS // UPDATES // 2, jit_compile
            )
            entry["keras_schedule_2x8"] = _difference(large, keras_only)
        report[name] = entry
    return report


def pretrain_settings(batch, accumulation, **changes):
    """`run_pretraining`'s keywords for 4 updates of `accumulation` batches of
    `batch` rows of `official_features` (length 12), two a checkpoint."""
    settings = dict(
        global_batch_size=batch,
        sequence_length=12,
        num_train_steps=4,
        num_warmup_steps=1,
        learning_rate=1e-2,
        gradient_accumulation_steps=accumulation,
        steps_per_epoch=2,
        save_every=2,
        keep_checkpoints=10,
        jit_compile=False,
        verbose=0,
    )
    return {**settings, **changes}


def _pretrained_weights(out, accumulation, jit_compile):
    """{path: array} and the final step after 4 updates of 8 rows, each in
    `accumulation` batches, served by `PretrainingBatches` (no TensorFlow)."""
    from albert_test_case import official_features

    from albert_keras.pretraining.pretraining_batches import PretrainingBatches
    from albert_keras.pretraining.pretraining_run import run_pretraining

    batch = 8 // accumulation
    features = official_features(32, 12)

    def train_dataset(skip):
        return PretrainingBatches(features, batch, steps=4 * accumulation, skip=skip)

    keras.utils.set_random_seed(0)
    settings = pretrain_settings(batch, accumulation, jit_compile=jit_compile)
    result = run_pretraining(train_dataset, micro_config(50), out, **settings)
    model = result["model"]
    weights = {v.path: keras.ops.convert_to_numpy(v) for v in model.weights}
    return weights, result["global_step"]


def pretraining_differences(work, jit_compile=False):
    """`run_pretraining` with 2 batches of 4 per update vs batches of 8:
    {"2x4": max weight diff, "steps": [final step of each]}."""
    import os

    large, step = _pretrained_weights(os.path.join(work, "large"), 1, jit_compile)
    small, small_step = _pretrained_weights(os.path.join(work, "acc"), 2, jit_compile)
    return {"2x4": _difference(large, small), "steps": [step, small_step]}
