"""`KerasHubPresetReader`: a keras-hub ALBERT preset folder, read as official."""

from __future__ import annotations

import json
import os

import numpy as np

from checkpoints_convert.checkpoint_reader import CheckpointReader
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.keras_hub_names import (
    KERAS_HUB_TASKS,
    PROJECTION,
    albert_config_values,
    keras_hub_names,
)
from checkpoints_convert.keras_hub_writer import hub_variable, import_keras_hub
from checkpoints_convert.name_row import TRANSPOSE

PRESET_CONFIG = "config.json"
TASK_CONFIG = "task.json"
PRESET_WEIGHTS = ("model.weights.h5", "model.weights.json")  # whole, sharded
PRESET_VOCAB = os.path.join("assets", "tokenizer", "vocabulary.spm")


def is_keras_hub_preset(path) -> bool:
    """A folder with keras-hub's `config.json` and `model.weights.h5`."""
    path = os.fspath(path)
    if not os.path.isfile(os.path.join(path, PRESET_CONFIG)):
        return False
    return any(os.path.isfile(os.path.join(path, f)) for f in PRESET_WEIGHTS)


class KerasHubPresetReader:
    """A keras-hub `AlbertBackbone` preset with the interface of `CheckpointReader`.

    keras-hub loads the preset (`keras_hub.models.AlbertBackbone.from_preset`),
    and every weight is presented under its official TF1 name and layout
    (`KERAS_HUB_NAME_TABLE`), so `load_official_checkpoint` converts it with
    the same checks as a release. A preset of another model (BERT, ...) is
    refused naming its class. An `AlbertTextClassifier` task preset gives
    the official run_classifier head too (`output_weights`, `output_bias`);
    other keras-hub task heads are reported as skipped. keras-hub always
    has the embedding projection; where E == H the official model has none,
    and it must be the identity.

    Args:
        path: the preset folder (`config.json`, `model.weights.h5`).

    Example:
    >>> reader = KerasHubPresetReader("albert_preset/")  # doctest: +SKIP
    >>> reader.shape("bert/pooler/dense/kernel")  # doctest: +SKIP
    (768, 768)
    """

    optional_parts: tuple[str, ...] = ()
    foreign_heads: tuple[str, ...] = ()
    ignored_keys: tuple[str, ...] = ()
    is_head = staticmethod(CheckpointReader.is_head)

    def __init__(self, path: str | os.PathLike):
        self.path = self.prefix = os.fspath(path)
        self.config_path = os.path.join(self.path, PRESET_CONFIG)
        self.choice = "model.weights.h5"
        hub_config = _backbone_config(self.path, self.config_path)
        keras_hub = import_keras_hub()
        hub = keras_hub.models.AlbertBackbone.from_preset(self.path)
        self.config_values = albert_config_values(hub_config)
        self._stored = {}
        for name, variable_path in keras_hub_names(
            hub.num_groups, hub.num_inner_repetitions
        ):
            variable = hub_variable(hub, variable_path)
            self._stored[name] = np.asarray(variable.numpy(), dtype=np.float32)
        self._official_layouts(hub)
        self._read_task(keras_hub)
        vocab = os.path.join(self.path, PRESET_VOCAB)
        self.vocab_path = vocab if os.path.isfile(vocab) else None

    def _official_layouts(self, hub):
        hidden = hub.hidden_dim
        for name, value in list(self._stored.items()):
            if value.ndim == 3:  # attention kernels: [H, n, h] or [n, h, H]
                self._stored[name] = value.reshape(hidden, hidden)
            elif value.ndim == 2 and "/self/" in name and name.endswith("bias"):
                self._stored[name] = value.reshape(hidden)
        if hub.embedding_dim != hidden:
            return
        kernel = self._stored.pop(PROJECTION + "kernel")
        bias = self._stored.pop(PROJECTION + "bias")
        if not (np.array_equal(kernel, np.eye(hidden)) and not bias.any()):
            raise ConversionError(
                f"{self.path!r}: embedding_dim == hidden_dim ({hidden}) but the "
                "embedding projection is not the identity; the official ALBERT "
                "(and albert-keras) has no projection when E == H, so these "
                "weights cannot be loaded. Use keras-hub for this model."
            )

    def _read_task(self, keras_hub):
        """The head of a task preset (`task.json`) keras-hub and we share."""
        path = os.path.join(self.path, TASK_CONFIG)
        if not os.path.isfile(path):
            return
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        class_name = saved.get("class_name")
        # keras-hub's multi-label classifier: `activation="sigmoid"` (its
        # config holds `keras.activations.serialize`, the name).
        self.multi_label = (saved.get("config") or {}).get("activation") == "sigmoid"
        rows = {c: r for c, r in KERAS_HUB_TASKS.values()}.get(class_name)
        if rows is None:
            self.foreign_heads = (f"keras-hub {class_name} head ({TASK_CONFIG})",)
            return
        task = getattr(keras_hub.models, class_name).from_preset(self.path)
        for name, variable_path, transposed in rows:
            value = np.asarray(hub_variable(task, variable_path).numpy(), "float32")
            self._stored[name] = TRANSPOSE(value) if transposed else value

    def load_config(self):
        """The `AlbertConfig` of the preset's `config.json`."""
        from albert_keras.config import AlbertConfig

        return AlbertConfig.from_dict(self.config_values)

    @property
    def names(self) -> list[str]:
        return list(self._stored)

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self._stored[name].shape)

    def read(self, name: str) -> np.ndarray:
        return self._stored[name]

    @staticmethod
    def is_optimizer_state(name: str) -> bool:
        return False


def _backbone_config(path, config_path):
    """The `config` of an `AlbertBackbone` preset; other classes are refused."""
    with open(config_path, encoding="utf-8") as f:
        try:
            saved = json.load(f)
        except json.JSONDecodeError as e:
            raise ConversionError(f"{config_path!r} is not JSON: {e}") from None
    name = saved.get("class_name") if isinstance(saved, dict) else None
    if name != "AlbertBackbone" or not isinstance(saved.get("config"), dict):
        raise ConversionError(
            f"{path!r} is a keras-hub preset of {name or 'an unknown class'!s}, "
            "not of AlbertBackbone: albert-keras loads ALBERT presets only."
        )
    return saved["config"]
