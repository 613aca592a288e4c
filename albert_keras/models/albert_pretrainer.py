"""`AlbertPretrainer`: masked LM at given positions + sentence-order prediction."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from albert_keras.layers.masked_lm_head import MaskedLMHead
from albert_keras.layers.sentence_order_head import SentenceOrderHead
from albert_keras.models.input_selection import select_inputs
from albert_keras.models.model_arguments import check_backbone
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertPretrainer(TaskModel):
    """ALBERT with its pretraining heads, trainable with `fit` on official features.

    Inputs: the backbone inputs plus `mask_positions` [batch, P]. Outputs:
    `mlm_logits` [batch, P, V] and `sop_logits` [batch, 2]. Targets `y` are a
    dict with `mask_ids` [batch, P], `mask_weights` [batch, P] (0 for padded
    predictions) and `sop_labels` [batch] (0: original order, 1: swapped).
    `features_to_xy` turns the official TFRecord features into `(x, y)`.

    Without a `loss` in `compile`, the loss is the official one: the MLM loss
    averaged over real predictions (`sum(w * ce) / (sum(w) + 1e-5)`) plus the
    mean SOP loss; metrics are the MLM and SOP losses and accuracies.

    Args:
        backbone: `AlbertBackbone`.

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertPretrainer(AlbertBackbone("albert_tiny"))
    >>> sorted(model.output)  # `output_names` holds Keras's op names
    ['mlm_logits', 'sop_logits']
    """

    def __init__(self, backbone, **kwargs):
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.mlm_head = MaskedLMHead(
            backbone.embeddings,
            activation=config.hidden_act,
            initializer_range=config.initializer_range,
            dtype=backbone.dtype_policy,
            name="mlm_head",
        )
        self.sop_head = SentenceOrderHead(
            config.hidden_size,
            initializer_range=config.initializer_range,
            dtype=backbone.dtype_policy,
            name="sop_head",
        )
        # === Functional model ===
        inputs = self.backbone_inputs()
        inputs["mask_positions"] = keras.Input(
            (None,), dtype="int32", name="mask_positions"
        )
        features = backbone({k: inputs[k] for k in backbone.input})
        mlm_logits = self.mlm_head(
            features["sequence_output"], inputs["mask_positions"]
        )
        sop_logits = self.sop_head(features["pooled_output"])
        outputs = {
            "mlm_logits": ops.cast(mlm_logits, "float32"),
            "sop_logits": ops.cast(sop_logits, "float32"),
        }
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # === Metrics ===
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.sop_loss_tracker = keras.metrics.Mean(name="sop_loss")
        # The share of real predictions whose label has the highest logit
        # (`_label_logits`; ties, which float32 logits all but never have,
        # count as correct).
        self.mlm_accuracy = keras.metrics.Mean(name="mlm_accuracy")
        self.sop_accuracy = keras.metrics.SparseCategoricalAccuracy(name="sop_accuracy")

    def call(self, inputs, training=None, mask=None):
        # The same outputs as the functional graph built above, with the last
        # block computed only at [CLS] and the masked positions (no head reads
        # the other rows): about a fifth less work per step for the small
        # config at 128 tokens. The graph stays as built, so saving, summary
        # and the converter see the usual layers.
        inputs = select_inputs(self, inputs)
        features = self.backbone.outputs_at(
            inputs, inputs["mask_positions"], training=training
        )
        mlm_logits = self.mlm_head(features["sequence_output"], training=training)
        sop_logits = self.sop_head(features["pooled_output"], training=training)
        return {
            "mlm_logits": ops.cast(mlm_logits, "float32"),
            "sop_logits": ops.cast(sop_logits, "float32"),
        }

    @staticmethod
    def features_to_xy(features):
        """Official pretraining features -> `(x, y)` for `fit` (use in `tf.data`).

        Reads `input_ids`, `input_mask`, `segment_ids`, `masked_lm_positions`,
        `masked_lm_ids`, `masked_lm_weights` and `next_sentence_labels` (the
        SOP label in ALBERT's files).
        """
        x = {
            "token_ids": features["input_ids"],
            "segment_ids": features["segment_ids"],
            "padding_mask": features["input_mask"],
            "mask_positions": features["masked_lm_positions"],
        }
        y = {
            "mask_ids": features["masked_lm_ids"],
            "mask_weights": features["masked_lm_weights"],
            "sop_labels": _flat(features["next_sentence_labels"]),
        }
        return x, y

    @staticmethod
    def _num_replicas():
        if keras.backend.backend() != "tensorflow":
            return 1
        import tensorflow as tf

        return tf.distribute.get_strategy().num_replicas_in_sync

    def _add_global_weight_total(self, data):
        """Adds the all-replica sum of `mask_weights` to `y` (outside XLA).

        The official MLM loss divides by the number of real predictions in the
        batch; with several replicas each sees part of the batch, so the
        denominator must be the global count for a replicated run to give
        the same loss and gradients as one device.
        """
        if self._num_replicas() == 1:
            return data
        import tensorflow as tf

        x, y = data[0], data[1]
        total = tf.reduce_sum(tf.cast(y["mask_weights"], "float32"))
        total = tf.distribute.get_replica_context().all_reduce("sum", total)
        return (x, dict(y, mask_weight_total=total), *data[2:])

    def train_step(self, *args):
        # JAX's trainer passes (state, data); replicas are TensorFlow's.
        if keras.backend.backend() != "tensorflow":
            return super().train_step(*args)
        (data,) = args
        return super().train_step(self._add_global_weight_total(data))

    def test_step(self, *args):
        if keras.backend.backend() != "tensorflow":
            return super().test_step(*args)
        (data,) = args
        return super().test_step(self._add_global_weight_total(data))

    def _official_losses(self, y, y_pred):
        weights = ops.cast(y["mask_weights"], "float32")
        label_logits, log_norm = _label_logits(y_pred["mlm_logits"], y["mask_ids"])
        mlm_ce = log_norm - label_logits
        replicas = self._num_replicas()
        if "mask_weight_total" in y:
            # Each replica's share of the global mean, scaled back up by the
            # replica count (Keras divides the loss by it before summing).
            denominator = (y["mask_weight_total"] + 1e-5) / replicas
        else:
            denominator = ops.sum(weights) + 1e-5
        mlm_loss = ops.sum(weights * mlm_ce) / denominator
        sop_ce = keras.losses.sparse_categorical_crossentropy(
            ops.reshape(y["sop_labels"], (-1,)), y_pred["sop_logits"], from_logits=True
        )
        return mlm_loss, ops.mean(sop_ce)

    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, training=True
    ):
        if self._compile_loss is not None:
            return super().compute_loss(x, y, y_pred, sample_weight, training)
        mlm_loss, sop_loss = self._official_losses(y, y_pred)
        self.mlm_loss_tracker.update_state(mlm_loss)
        self.sop_loss_tracker.update_state(sop_loss)
        total = mlm_loss + sop_loss
        for loss in self.losses:
            total = total + ops.cast(loss, total.dtype)
        # As Keras's own losses do: divide by the replica count, since the
        # strategy sums the replicas' gradients.
        return total / self._num_replicas()

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self._compile_loss is not None:
            return super().compute_metrics(x, y, y_pred, sample_weight)
        label_logits, _ = _label_logits(y_pred["mlm_logits"], y["mask_ids"])
        correct = ops.greater_equal(label_logits, 0.0)
        self.mlm_accuracy.update_state(
            ops.cast(correct, "float32"), sample_weight=y["mask_weights"]
        )
        self.sop_accuracy.update_state(
            ops.reshape(y["sop_labels"], (-1,)), y_pred["sop_logits"]
        )
        return self.get_metrics_result()

    @property
    def metrics(self):
        return super().metrics + [
            self.mlm_loss_tracker,
            self.sop_loss_tracker,
            self.mlm_accuracy,
            self.sop_accuracy,
        ]


def _label_logits(logits, ids):
    """The label's logit less the row maximum, and the log-normalizer.

    Returns `(logits[id] - max, log(sum(exp(logits - max))))` per row, so the
    cross-entropy is their difference and the prediction is right where the
    first is 0. Written out rather than with `sparse_categorical_crossentropy`
    and an argmax so that the loss and the accuracy share one pass for the
    maximum (the argmax over V, compiled by XLA into a serial loop, took a
    twentieth of the small config's step at 8 x 128 on CPU). The label is
    gathered (one value per row) with the gradient of a one-hot product,
    which XLA fuses into the softmax gradient: a gather's own gradient
    scatters into a zeroed [rows, V] tensor, and a one-hot product in the
    forward pass is a sum over V, which XLA's CPU backend runs unvectorized.
    """
    logits = ops.cast(logits, "float32")
    shifted = logits - ops.stop_gradient(ops.max(logits, axis=-1, keepdims=True))
    ids = ops.cast(ids, "int32")
    vocab = ops.shape(logits)[-1]

    @ops.custom_gradient
    def pick(x):
        # x[..., id]; its gradient is upstream * one_hot(id).
        value = ops.squeeze(ops.take_along_axis(x, ids[..., None], axis=-1), -1)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return ops.expand_dims(upstream, -1) * ops.one_hot(
                ids, vocab, dtype="float32"
            )

        return value, grad

    label = pick(shifted)
    return label, ops.log(ops.sum(ops.exp(shifted), axis=-1))


def _flat(labels):
    """Labels as a vector, in their own kind: NumPy (a `PyDataset` batch), a
    `tf.Tensor` (in `tf.data`, whatever the backend), or a backend tensor."""
    if isinstance(labels, np.ndarray):
        return labels.reshape(-1)
    if type(labels).__module__.startswith("tensorflow"):
        import tensorflow as tf

        return tf.reshape(labels, (-1,))
    return ops.reshape(labels, (-1,))
