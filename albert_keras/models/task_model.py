"""`TaskModel`: what every ALBERT task model shares (backbone inputs, config)."""

from __future__ import annotations

import keras

from albert_keras.models.albert_model_base import AlbertModelBase
from albert_keras.models.input_selection import select_inputs
from albert_keras.models.model_arguments import check_model_kwargs
from albert_keras.models.quantized_layers import (
    QUANTIZED_LAYERS,
    quantize_again,
    quantized_config,
)


def _replicated_non_tpu_strategy():
    """The current `tf.distribute` strategy if it spans several non-TPU devices."""
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    strategy = tf.distribute.get_strategy()
    if strategy.num_replicas_in_sync < 2 or isinstance(
        strategy, tf.distribute.TPUStrategy
    ):
        return None
    return strategy


class TaskModel(AlbertModelBase, keras.Model):
    """Base of the task models: a functional model over an `AlbertBackbone`.

    Subclasses build their head in `__init__` and call `super().__init__` with
    functional inputs and outputs; serialization stores the backbone and the
    subclass's own arguments (`_task_config`).

    `jit_compile=True` under a multi-device strategy other than TPU: Keras
    compiles the whole step, `strategy.run` included, into one XLA cluster,
    which fails on GPUs and CPUs ("variable on CPU:1 accessed from CPU:0", the
    failure keras-hub's models have). Task models instead compile each
    replica's forward and backward pass with XLA and leave the all-reduce and
    the optimizer update to the strategy.
    """

    def __init__(self, inputs, outputs, **kwargs):
        check_model_kwargs(type(self), kwargs)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def compile(self, *args, jit_compile="auto", **kwargs):
        super().compile(*args, jit_compile=jit_compile, **kwargs)
        self._per_replica_xla = False
        if self.jit_compile and _replicated_non_tpu_strategy() is not None:
            self.jit_compile = False
            self._per_replica_xla = True
            self._xla_gradients = None

    def compile_from_config(self, config):
        # `compile` above only adds per-replica XLA to Keras's, so a saved
        # model recompiles as Keras would do it (Keras skips models that
        # override `compile`, with a warning).
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if hasattr(self, "optimizer") and self.built:
            self.optimizer.build(self.trainable_variables)

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras 3 builds from the first batch reduced with `strategy.reduce`
        # over the whole nested batch, which MultiWorkerMirroredStrategy
        # rejects ("Attempt to convert a value ({'token_ids': PerReplica..."):
        # only the shapes matter, so take the local replica's values.
        import tensorflow as tf  # only the TensorFlow trainer calls this

        if self._distribute_strategy is None:
            return self._build_before_tracing(iterator, data_batch)
        mwms = tf.distribute.MultiWorkerMirroredStrategy
        if iterator is not None and isinstance(self.distribute_strategy, mwms):
            for _, _, it in iterator:
                batch = next(it)
                data_batch = keras.tree.map_structure(
                    lambda v: (
                        self.distribute_strategy.experimental_local_results(v)[0]
                        if isinstance(v, tf.distribute.DistributedValues)
                        else v
                    ),
                    batch,
                )
                break
            iterator = None
        return super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def _build_before_tracing(self, iterator, data_batch):
        # Without a strategy Keras creates the optimizer's slots and the
        # metric and loss trackers inside the first trace of the train (or
        # test) step; a `tf.function` that creates variables traces again,
        # so the whole step was traced twice (about half the CPU time of a
        # small model's first `fit`). Build them first, from the batch's
        # shapes alone: no batch is taken from the iterator. (If a Keras
        # upgrade renames the iterator's dataset, Keras's own way runs.)
        if data_batch is None:
            dataset = getattr(iterator, "_distributed_dataset", None)
            data_batch = getattr(dataset, "element_spec", None)
        if data_batch is not None:
            self._symbolic_build(data_batch=data_batch)

    def _gradients(self, x, y, sample_weight):
        # Mirrors Keras's TensorFlow `train_step` up to the gradients.
        import tensorflow as tf

        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self._compute_loss(
                x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True
            )
            scaled = self.optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled, self.trainable_weights)
        return loss, y_pred, gradients

    def _for_multi_worker_reduce(self, logs):
        # Keras reduces step outputs under MultiWorkerMirroredStrategy with
        # `strategy.reduce("MEAN", v, axis=0)`, which fails on the scalar
        # metrics ("Invalid reduction dimension 0 for input with 0
        # dimensions"). As vectors of one element they reduce to the mean
        # over all workers.
        if keras.backend.backend() != "tensorflow":
            return logs
        import tensorflow as tf

        if not isinstance(
            self.distribute_strategy, tf.distribute.MultiWorkerMirroredStrategy
        ):
            return logs
        return keras.tree.map_structure(lambda v: tf.reshape(v, [1]), logs)

    def test_step(self, *args):
        # JAX's trainer passes (state, data); only TensorFlow needs the fix.
        if keras.backend.backend() != "tensorflow":
            return super().test_step(*args)
        return self._for_multi_worker_reduce(super().test_step(*args))

    def train_step(self, *args):
        if keras.backend.backend() != "tensorflow":
            return super().train_step(*args)
        (data,) = args
        if not getattr(self, "_per_replica_xla", False):
            return self._for_multi_worker_reduce(super().train_step(data))
        import tensorflow as tf

        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        if self._xla_gradients is None:
            self._xla_gradients = tf.function(self._gradients, jit_compile=True)
        loss, y_pred, gradients = self._xla_gradients(x, y, sample_weight)
        # The loss is scaled by 1 / replicas for the all-reduce sum; the
        # tracker shows it unscaled, as Keras's own train step does.
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        self._loss_tracker.update_state(
            loss * tf.cast(replicas, loss.dtype),
            sample_weight=tf.shape(keras.tree.flatten(x)[0])[0],
        )
        self.optimizer.apply_gradients(
            zip(gradients, self.trainable_weights, strict=True)
        )
        logs = self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        return self._for_multi_worker_reduce(logs)

    @staticmethod
    def backbone_inputs():
        return {
            "token_ids": keras.Input((None,), dtype="int32", name="token_ids"),
            "segment_ids": keras.Input((None,), dtype="int32", name="segment_ids"),
            "padding_mask": keras.Input((None,), dtype="int32", name="padding_mask"),
        }

    def call(self, inputs, training=None, mask=None):
        return super().call(select_inputs(self, inputs), training=training, mask=mask)

    def _task_config(self) -> dict:
        return {}

    def get_config(self):
        return {
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "name": self.name,
            "trainable": self.trainable,
            **self._task_config(),
            **quantized_config(self, skip=self.backbone),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        quantized = config.pop(QUANTIZED_LAYERS, None)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        model = cls(**config)
        quantize_again(model, quantized, skip=model.backbone)
        return model

    @classmethod
    def from_preset(cls, preset: str, load_weights=True, dtype=None, **kwargs):
        """A task model with its weights, from a preset name or a saved model.

        `preset` as in `AlbertBackbone.from_preset`: a keras-hub preset
        folder, an official release folder or `.tar.gz`, a TF1 Hub module
        folder, a transformers folder, a `.keras` file (the same task model
        is returned as saved; another model gives its backbone) or a bare
        name with cached weights. A head the source lacks starts from its
        initialization (reported in `model.conversion_report`).

        Args:
            preset: preset name or path.
            load_weights: False builds the preset's config with random weights.
            dtype: dtype policy of the built model.
            **kwargs: task arguments, e.g. `num_classes`.

        Example:
        >>> from albert_keras import AlbertClassifier
        >>> model = AlbertClassifier.from_preset(
        ...     "albert_tiny", load_weights=False, num_classes=3
        ... )
        >>> model.num_classes
        3
        """
        from albert_keras.models.preset_loading import load_from_preset

        return load_from_preset(
            cls, preset, load_weights=load_weights, dtype=dtype, **kwargs
        )

    def save_to_preset(self, preset_dir, tokenizer=None) -> str:
        """Writes the model as a keras-hub preset folder.

        An `AlbertClassifier` becomes keras-hub's `AlbertTextClassifier`
        (`keras_hub.models.TextClassifier.from_preset` reads it, with a
        preprocessor when `tokenizer` is given); the other task models are
        written as their backbone (keras-hub has no counterpart of their
        heads). See `AlbertBackbone.save_to_preset` for the arguments.
        """
        from albert_keras.models.preset_loading import save_to_preset

        return save_to_preset(self, preset_dir, tokenizer=tokenizer)
