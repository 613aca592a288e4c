"""`AlbertConfig`: the one place where `albert_config.json` names become ours."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from typing import Any

from albert_keras.presets import preset_values

# Activations as the official `modeling.get_activation` understands them, plus
# `gelu_new`, the name HF gives the same tanh approximation, and `gelu_exact`,
# the erf GELU (transformers' "gelu", for configs converted from transformers).
ACTIVATIONS = ("gelu", "gelu_new", "gelu_exact", "relu", "tanh", "linear")
SHARING_MODES = ("all", "attention", "ffn", "none")


@dataclasses.dataclass
class AlbertConfig:
    """Hyper-parameters of an ALBERT model, field for field `albert_config.json`.

    Every field of the official v1, v2 and `*_zh` configs is kept under its
    official name, so reading and writing a released `albert_config.json` is
    lossless; keys this class does not know are kept in `extra` and written
    back. `sharing` is ours: which parameters the layers of a group share.

    Args:
        vocab_size: int. Number of word pieces V.
        embedding_size: int. Width E of the factorized embedding.
        hidden_size: int. Width H of the encoder.
        num_hidden_layers: int. Number of layers L.
        num_hidden_groups: int. Number of parameter groups G; layer `l` uses
            group `int(l / L * G)`, as the official code computes it.
        inner_group_num: int. Attention + FFN blocks per layer.
        num_attention_heads: int. Attention heads; must divide `hidden_size`.
        intermediate_size: int. Width of the feed-forward layer.
        hidden_act: str. One of "gelu" (tanh approximation, as in the official
            code), "gelu_new" (the same), "gelu_exact" (erf; transformers'
            "gelu"), "relu", "tanh", "linear".
        hidden_dropout_prob: float. Dropout on embeddings and block outputs.
        attention_probs_dropout_prob: float. Dropout on attention weights.
        max_position_embeddings: int. Longest sequence the model can take.
        type_vocab_size: int. Number of segment ids.
        initializer_range: float. Stddev of the truncated-normal initializer.
        down_scale_factor, net_structure_type, gap_size, num_memory_blocks,
            layers_to_keep: official fields with no effect on the model; kept
            so configs round-trip.
        sharing: str. "all" (ALBERT), "attention" (attention shared, FFN per
            layer), "ffn" (FFN shared, attention per layer) or "none" (BERT).
        extra: dict. Unknown keys of a read config, written back unchanged.

    Example:
    >>> config = AlbertConfig.from_preset("albert_base_v2")
    >>> config.hidden_size
    768
    """

    vocab_size: int = 30000
    embedding_size: int = 128
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_hidden_groups: int = 1
    inner_group_num: int = 1
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    down_scale_factor: int = 1
    net_structure_type: int = 0
    gap_size: int = 0
    num_memory_blocks: int = 0
    layers_to_keep: list = dataclasses.field(default_factory=list)
    sharing: str = "all"
    extra: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    # --- validation -------------------------------------------------------
    def validate(self) -> None:
        """Raises `ValueError` naming the field, the value and what is allowed."""
        positive = (
            "vocab_size",
            "embedding_size",
            "hidden_size",
            "num_hidden_layers",
            "num_hidden_groups",
            "inner_group_num",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        )
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ValueError(
                    f"`{name}` must be a float in [0, 1). Received: {name}={value!r}"
                )
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                "`hidden_size` must be divisible by `num_attention_heads`. "
                f"Received: hidden_size={self.hidden_size}, "
                f"num_attention_heads={self.num_attention_heads}"
            )
        if self.num_hidden_groups > self.num_hidden_layers:
            raise ValueError(
                "`num_hidden_groups` cannot exceed `num_hidden_layers` (a group "
                "with no layer would hold unused weights). Received: "
                f"num_hidden_groups={self.num_hidden_groups}, "
                f"num_hidden_layers={self.num_hidden_layers}"
            )
        if str(self.hidden_act).lower() not in ACTIVATIONS:
            raise ValueError(
                f"Unknown `hidden_act`. Received: hidden_act={self.hidden_act!r}. "
                f"Allowed: {', '.join(ACTIVATIONS)}"
            )
        if self.sharing not in SHARING_MODES:
            raise ValueError(
                f"Unknown `sharing`. Received: sharing={self.sharing!r}. "
                f"Allowed: {', '.join(SHARING_MODES)}"
            )
        if not isinstance(self.initializer_range, (int, float)) or (
            self.initializer_range <= 0
        ):
            raise ValueError(
                "`initializer_range` must be a positive float. "
                f"Received: initializer_range={self.initializer_range!r}"
            )

    # --- derived quantities ----------------------------------------------
    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def group_index(self, layer_index: int) -> int:
        """The parameter group of a layer, computed exactly as the official code.

        The official code uses float arithmetic, `int(l / L * G)`; an integer
        formula differs for some (L, G), so we keep the float one.
        """
        return int(layer_index / self.num_hidden_layers * self.num_hidden_groups)

    # --- (de)serialization -----------------------------------------------
    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> AlbertConfig:
        """Builds a config from an `albert_config.json` dict (unknown keys kept)."""
        values = copy.deepcopy(dict(values))
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in values.items() if k in names}
        extra = {k: v for k, v in values.items() if k not in names}
        extra.update(known.pop("extra", None) or {})
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The `albert_config.json` dict; `sharing` only when it is not "all"."""
        out = {}
        for field in dataclasses.fields(self):
            if field.name == "extra":
                continue
            if field.name == "sharing" and self.sharing == "all":
                continue
            out[field.name] = copy.deepcopy(getattr(self, field.name))
        out.update(copy.deepcopy(self.extra))
        return out

    @classmethod
    def from_json_file(cls, path: str | os.PathLike) -> AlbertConfig:
        """Reads an official `albert_config.json` (or a folder holding one)."""
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "albert_config.json")
        try:
            with open(path, encoding="utf-8") as f:
                values = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"No ALBERT config at {path!r}. Pass the `albert_config.json` of "
                "the release (or its folder)."
            ) from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{path!r} is not valid JSON: {e}") from None
        if not isinstance(values, dict):
            raise ValueError(f"{path!r} must hold a JSON object of config fields.")
        return cls.from_dict(values)

    def to_json_string(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json_string())

    def replace(self, **changes) -> AlbertConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(copy.deepcopy(self), **changes)

    @classmethod
    def from_preset(cls, name: str, **overrides) -> AlbertConfig:
        """The config of a named preset (see `albert_keras.presets.PRESETS`).

        A new config each call; `overrides` change fields of the preset.
        """
        return cls(**{**preset_values(name), **overrides})
