"""`gradient_checkpointing`: the blocks are recomputed, the training is unchanged."""

import logging

import keras
import numpy as np
from albert_test_case import max_abs_diff, remat_spy

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.models import gradient_checkpointing

CONFIG = AlbertConfig(
    vocab_size=200,
    embedding_size=16,
    hidden_size=32,
    num_hidden_layers=3,
    num_hidden_groups=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)


def _batches():
    rng = np.random.default_rng(0)
    n, length, predictions = 8, 16, 3
    x = {
        "token_ids": rng.integers(5, 200, (n, length)).astype("int32"),
        "segment_ids": (np.arange(length)[None] >= 8).repeat(n, 0).astype("int32"),
        "padding_mask": (np.arange(length)[None] < 12).repeat(n, 0).astype("int32"),
        "mask_positions": np.tile(np.array([1, 4, 9], "int32"), (n, 1)),
    }
    y = {
        "mlm_logits": rng.integers(5, 200, (n, predictions)).astype("int32"),
        "sop_logits": rng.integers(0, 2, (n,)).astype("int32"),
    }
    return x, y


def _trained(remat, weights):
    keras.utils.set_random_seed(0)
    if remat:
        with gradient_checkpointing(CONFIG):
            model = AlbertPretrainer(AlbertBackbone(CONFIG))
    else:
        model = AlbertPretrainer(AlbertBackbone(CONFIG))
    x, y = _batches()
    model(x)
    if weights is not None:
        model.set_weights(weights)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss={"mlm_logits": loss, "sop_logits": loss},
        jit_compile=True,
    )
    start = model.get_weights()
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    return start, model.get_weights(), history.history["loss"][0]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_remat_training_equals_plain_training(monkeypatch):
    recomputed = remat_spy(monkeypatch)
    start, plain, plain_loss = _trained(False, None)
    assert recomputed == []
    warned = _Records()
    logging.getLogger("tensorflow").addHandler(warned)
    try:
        _, remat, remat_loss = _trained(True, start)
    finally:
        logging.getLogger("tensorflow").removeHandler(warned)
    # The integer mask is not handed to `tf.recompute_grad` to watch.
    assert not [m for m in warned.messages if "watched tensor" in m], warned.messages
    # Each of the 3 layers' block calls, in each traced step function.
    assert len(recomputed) >= 3 and len(recomputed) % 3 == 0, recomputed
    assert abs(plain_loss - remat_loss) < 1e-6
    moved = max(max_abs_diff(a, b) for a, b in zip(start, plain, strict=True))
    assert moved > 1e-3  # the weights did train
    assert max(max_abs_diff(a, b) for a, b in zip(plain, remat, strict=True)) < 1e-5


def _gradients(backbone, inputs, jit_compile):
    import tensorflow as tf

    @tf.function(jit_compile=jit_compile)
    def step():
        with tf.GradientTape() as tape:
            out = backbone(inputs, training=True)["sequence_output"]
            loss = tf.reduce_sum(out * tf.range(1.0, 33.0))
        grads = tape.gradient(loss, backbone.trainable_variables)
        return loss, [tf.convert_to_tensor(g) for g in grads if g is not None]

    loss, grads = step()
    seeds = [v.numpy() for v in backbone.variables if "seed_generator" in v.path]
    return float(loss), [g.numpy() for g in grads], seeds


def test_recomputed_dropout_draws_the_forward_masks():
    """The recomputation in the backward pass must draw the forward's dropout
    masks (it drew new ones: gradients off by units), and leave the dropout
    states where the forward left them, shared blocks included (else the next
    step repeats this step's masks)."""
    from albert_keras.models.weight_copy import with_gradient_checkpointing

    config = CONFIG.replace(
        num_hidden_groups=1, hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3
    )
    x, _ = _batches()
    inputs = {k: x[k] for k in ("token_ids", "segment_ids", "padding_mask")}
    for jit_compile in (False, True):
        keras.utils.set_random_seed(0)
        plain = AlbertBackbone(config)
        remat = with_gradient_checkpointing(plain)
        for _ in range(2):  # the second step starts from the first's states
            loss, grads, seeds = _gradients(plain, inputs, jit_compile)
            again = _gradients(remat, inputs, jit_compile)
            remat_loss, remat_grads, remat_seeds = again
            assert abs(loss - remat_loss) < 1e-3 * abs(loss)
            for ours, theirs in zip(grads, remat_grads, strict=True):
                # float32 rounding of gradients in the thousands
                assert max_abs_diff(ours, theirs) <= 1e-5 * (np.abs(ours).max() + 1)
            assert all(map(np.array_equal, seeds, remat_seeds))
