"""`TaskModel`: what every ALBERT task model shares (backbone inputs, config)."""

from __future__ import annotations

import keras


class TaskModel(keras.Model):
    """Base of the task models: a functional model over an `AlbertBackbone`.

    Subclasses build their head in `__init__` and call `super().__init__` with
    functional inputs and outputs; serialization stores the backbone and the
    subclass's own arguments (`_task_config`).
    """

    @staticmethod
    def backbone_inputs():
        return {
            "token_ids": keras.Input((None,), dtype="int32", name="token_ids"),
            "segment_ids": keras.Input((None,), dtype="int32", name="segment_ids"),
            "padding_mask": keras.Input((None,), dtype="int32", name="padding_mask"),
        }

    def _task_config(self) -> dict:
        return {}

    def get_config(self):
        return {
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "name": self.name,
            "trainable": self.trainable,
            **self._task_config(),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        return cls(**config)

    @classmethod
    def from_preset(cls, name: str, dtype=None, **kwargs):
        """A randomly initialised task model over a preset-size backbone."""
        from albert_keras.models.albert_backbone import AlbertBackbone

        return cls(AlbertBackbone.from_preset(name, dtype=dtype), **kwargs)

    @classmethod
    def from_official_checkpoint(cls, path, config=None, dtype=None, **kwargs):
        """Loads a google-research checkpoint with this task's head.

        See `checkpoints_convert.load_official_checkpoint`.
        """
        from checkpoints_convert import load_official_checkpoint

        return load_official_checkpoint(
            path, model=cls, config=config, dtype=dtype, **kwargs
        )
