"""`AlbertConfig`: the one place where `albert_config.json` names become ours."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
from typing import Any

from albert_keras.config_checks import gb as _gb
from albert_keras.config_checks import is_number as _is_number
from albert_keras.config_checks import near_miss as _near_miss
from albert_keras.config_checks import ticked as _ticked
from albert_keras.config_checks import unknown_preset as _unknown_preset
from albert_keras.presets import ALIASES, PRESETS, preset_values

# Activations as the official `modeling.get_activation` understands them, plus
# `gelu_new`, the name HF gives the same tanh approximation, and `gelu_exact`,
# the erf GELU (transformers' "gelu", for configs converted from transformers).
ACTIVATIONS = ("gelu", "gelu_new", "gelu_exact", "relu", "tanh", "linear")
SHARING_MODES = ("all", "attention", "ffn", "none")
# Fields every released `albert_config.json` (v1, v2, *_zh, TF1 Hub assets)
# writes and that decide the weights or the outputs: a file without one is not
# a release's config, and a default would silently build another model (our
# defaults are albert_base's, the official code's albert_xxlarge's). Dropout,
# `initializer_range` and the fields with no effect keep their defaults.
REQUIRED_FIELDS = (
    "vocab_size",
    "embedding_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "num_hidden_groups",
    "inner_group_num",
    "hidden_act",
    "max_position_embeddings",
    "type_vocab_size",
)
# Every required field but the activation is a positive integer.
_POSITIVE_FIELDS = tuple(f for f in REQUIRED_FIELDS if f != "hidden_act")
# What the backbone's parameter count grows with.
_SIZE_FIELDS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_hidden_groups",
    "inner_group_num",
    "sharing",
)
# Bounds of float32 weight bytes: one weight (albert_xxlarge's largest, the
# 4096 x 16384 FFN kernel, is 0.27e9) and all of the backbone (an unshared
# 24-layer xxlarge is 19e9). Beyond them a size is a typo, and failing here
# beats an allocation error or a swapping machine.
MAX_WEIGHT_BYTES = 4e9
MAX_TOTAL_BYTES = 4e10


@dataclasses.dataclass
class AlbertConfig:
    """Hyper-parameters of an ALBERT model, field for field `albert_config.json`.

    Every field of the official v1, v2 and `*_zh` configs is kept under its
    official name, so reading and writing a released `albert_config.json` is
    lossless; keys this class does not know are kept in `extra` and written
    back, unless one is a near miss of a field (a typo), which is refused.
    A file must have every field of `REQUIRED_FIELDS`; sizes whose float32
    weights would exceed `MAX_WEIGHT_BYTES` (one weight) or `MAX_TOTAL_BYTES`
    are refused before anything is built. `sharing` is ours: which
    parameters the layers of a group share.

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
        """Raises `ValueError` naming the field, the value and what is allowed.

        Checks types and ranges first, then the weight sizes the fields imply,
        so an absurd config fails here, before any weight is allocated.
        """
        self._check_sizes()
        self._check_probabilities()
        self._check_structure()
        self._check_memory()

    def _check_sizes(self) -> None:
        for name in _POSITIVE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )

    def _check_probabilities(self) -> None:
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not _is_number(value) or not 0.0 <= value < 1.0:
                raise ValueError(
                    f"`{name}` must be a float in [0, 1) (0 turns dropout off; "
                    f"the v1 releases use 0.1, v2 0). Received: {name}={value!r}"
                )
        value = self.initializer_range
        if not _is_number(value) or not 0.0 < value < math.inf:
            raise ValueError(
                "`initializer_range` must be a finite positive float (the "
                "releases use 0.02). Received: "
                f"initializer_range={self.initializer_range!r}"
            )

    def _check_structure(self) -> None:
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

    def _check_memory(self) -> None:
        """Refuses sizes whose float32 weights no machine holds (a typo's)."""
        for weight, fields in self._weight_fields():
            size = 4 * math.prod(getattr(self, f) for f in fields)
            if size > MAX_WEIGHT_BYTES:
                received = ", ".join(f"{f}={getattr(self, f)}" for f in fields)
                raise ValueError(
                    f"{weight} [{' x '.join(fields)}] would take {_gb(size)} in "
                    f"float32, over the {_gb(MAX_WEIGHT_BYTES)} bound for any "
                    f"single weight. Check {_ticked(fields)} (a stray digit?). "
                    f"Received: {received}"
                )
        total = 4 * self._parameter_bound()
        if total > MAX_TOTAL_BYTES:
            fields = _SIZE_FIELDS
            received = ", ".join(f"{f}={getattr(self, f)!r}" for f in fields)
            raise ValueError(
                f"The backbone would hold up to {_gb(total)} of float32 weights, "
                f"over the {_gb(MAX_TOTAL_BYTES)} bound. Check {_ticked(fields)} "
                f"(fewer layers or groups, or more sharing). Received: {received}"
            )

    def _weight_fields(self) -> list[tuple[str, tuple[str, ...]]]:
        """(weight, the fields that give its shape) for each kind of weight."""
        e, h = "embedding_size", "hidden_size"
        return [
            ("The word embedding table", ("vocab_size", e)),
            ("The position embedding table", ("max_position_embeddings", e)),
            ("The segment embedding table", ("type_vocab_size", e)),
            ("The E -> H projection kernel", (e, h)),
            ("An attention kernel", (h, h)),
            ("A feed-forward kernel", (h, "intermediate_size")),
        ]

    def _parameter_bound(self) -> int:
        """An upper bound of the backbone's parameters, in O(1) time.

        Counts `num_hidden_groups` groups (the official formula may leave one
        unused), so it never undercounts; `parameter_table` counts exactly.
        """
        e, h, i = self.embedding_size, self.hidden_size, self.intermediate_size
        g, layers, inner = (
            self.num_hidden_groups,
            self.num_hidden_layers,
            self.inner_group_num,
        )
        attention_owners, ffn_owners = {
            "all": (g, g),
            "attention": (g, layers),
            "ffn": (layers, g),
            "none": (layers, layers),
        }[self.sharing]
        tables = self.vocab_size + self.max_position_embeddings + self.type_vocab_size
        return (
            tables * e
            + 2 * e
            + e * h
            + h
            + attention_owners * inner * (4 * h * h + 6 * h)
            + ffn_owners * inner * (2 * h * i + i + 3 * h)
            + h * h
            + h
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
        """Builds a config from an `albert_config.json` dict.

        Fields left out take the defaults (a file must have them all: see
        `from_json_file`). Unknown keys are kept in `extra`, except a near
        miss of a field's name, which is taken for a typo and refused.

        Args:
            values: dict of `albert_config.json` fields.
        """
        return cls._from_values(values, source=None, required=())

    @classmethod
    def _from_values(cls, values, source, required) -> AlbertConfig:
        values = copy.deepcopy(dict(values))
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        where = f"{source!r}: " if source else ""
        typos = [
            f"unknown field `{key}`, did you mean `{match}`?"
            for key in values
            if (match := _near_miss(key, names)) is not None
        ]
        if typos:
            raise ValueError(
                f"{where}{'; '.join(typos)} Rename the key (a key that is no "
                "field's typo is kept in `extra`)."
            )
        missing = [name for name in required if name not in values]
        if missing:
            raise ValueError(
                f"{where}missing required field(s) {_ticked(missing)}. Every "
                "released albert_config.json has them and a default would "
                "build a different model; add them with the values of the "
                "checkpoint's release (e.g. albert_base: hidden_size=768)."
            )
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
        """Reads an official `albert_config.json` (or a folder holding one).

        Stricter than `from_dict`: the file must have every field of
        `REQUIRED_FIELDS`; errors name the file.

        Args:
            path: the file, or the folder holding `albert_config.json`.
        """
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
        except UnicodeDecodeError:
            raise ValueError(
                f"{path!r} is not a JSON text file: pass the release's "
                "albert_config.json."
            ) from None
        if not isinstance(values, dict):
            raise ValueError(f"{path!r} must hold a JSON object of config fields.")
        return cls._from_values(values, source=path, required=REQUIRED_FIELDS)

    def to_json_string(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str | os.PathLike) -> None:
        """Writes `to_json_string()` to `path` (temporary file, then rename)."""
        from albert_keras.atomic_files import atomic_write

        with atomic_write(path) as f:
            f.write(self.to_json_string())

    def replace(self, **changes) -> AlbertConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(copy.deepcopy(self), **changes)

    @classmethod
    def from_preset(cls, name: str, **overrides) -> AlbertConfig:
        """The config of a named preset (see `albert_keras.presets.PRESETS`).

        A new config each call; `overrides` change fields of the preset.
        """
        try:
            values = preset_values(name)
        except ValueError:
            names = sorted(PRESETS) + sorted(ALIASES)
            raise ValueError(_unknown_preset(name, names)) from None
        return cls(**{**values, **overrides})
