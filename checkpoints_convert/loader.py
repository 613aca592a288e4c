"""`load_official_checkpoint`: a google-research TF1 checkpoint (or a transformers
ALBERT folder, read under the official names) as a Keras model."""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import warnings

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
)
from checkpoints_convert.checkpoint_reader import CheckpointReader
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_checkpoint_reader import HFCheckpointReader, is_hf_folder
from checkpoints_convert.name_table import (
    TRANSPOSE,
    model_heads,
    official_groups,
    official_weights,
)

logger = logging.getLogger(__name__)

MODELS = {
    "backbone": AlbertBackbone,
    "pretrainer": AlbertPretrainer,
    "classifier": AlbertClassifier,
    "span_qa": AlbertSpanQA,
    "squad_v2": AlbertSquadV2,
    "multiple_choice": AlbertMultipleChoice,
}
# Task heads a release usually lacks: a fine-tuning head starts fresh. A
# missing pretraining head is unusual (TF1 Hub modules without the SOP head,
# transformers#12196), so it starts fresh too, with a warning.
_FINE_TUNING_HEADS = ("classifier", "span_qa", "squad_v2", "multiple_choice")
# Official dims that are not config fields, as error messages name them.
_DIM_NAMES = {
    "num_classes": "the classifier's `num_classes`",
    "sop_classes": "the SOP head's 2 classes",
    "span_outputs": "the SQuAD head's 2 outputs (start, end)",
    "squad_v2_score": "the SQuAD v2 head's single score",
    "squad_v2_concat": "twice `hidden_size` (a token and the start token)",
    "choice_outputs": (
        "the multiple-choice head's single score (a run_classifier head has "
        "`num_classes` rows)"
    ),
}
_MAX_LISTED = 12


@dataclasses.dataclass(frozen=True)
class ConversionReport:
    """What a conversion did, attached to the model as `model.conversion_report`.

    Attributes:
        checkpoint: the prefix read; `prefix_choice` says how it was found.
        config_source: where the config came from.
        model: the Keras class built.
        loaded: official names assigned to Keras weights.
        skipped_heads: heads in the checkpoint the model does not have.
        ignored: optimizer slots, `global_step` and loss-scale state.
        new_heads: heads of the model absent from the checkpoint, left at
            their initialization (e.g. a classifier on a pretraining release).
        vocab_path: the release's SentencePiece model or WordPiece vocabulary.

    Example:
    >>> model = load_official_checkpoint("albert_base_v2")  # doctest: +SKIP
    >>> print(model.conversion_report.summary())  # doctest: +SKIP
    checkpoint: albert_base_v2/model.ckpt-best (the only one)
    config: albert_base_v2/albert_config.json
    AlbertBackbone: loaded 25 variables
    skipped 7 head variables the model has no head for: cls/predictions, ...
    """

    checkpoint: str
    prefix_choice: str
    config_source: str
    model: str
    loaded: tuple[str, ...]
    skipped_heads: tuple[str, ...]
    ignored: tuple[str, ...]
    new_heads: tuple[str, ...]
    vocab_path: str | None

    def summary(self) -> str:
        lines = [
            f"checkpoint: {self.checkpoint} ({self.prefix_choice})",
            f"config: {self.config_source}",
            f"{self.model}: loaded {len(self.loaded)} variables",
        ]
        if self.skipped_heads:
            heads = sorted({_head_of(n) for n in self.skipped_heads})
            lines.append(
                f"skipped {len(self.skipped_heads)} head variables the model has "
                f"no head for: {', '.join(heads)}"
            )
        if self.ignored:
            lines.append(
                f"ignored {len(self.ignored)} optimizer / training-state variables"
            )
        if self.new_heads:
            lines.append(
                f"not in the checkpoint, newly initialized: {', '.join(self.new_heads)}"
            )
        return "\n".join(lines)


def open_checkpoint(path):
    """The reader for `path`: a transformers folder (`config.json` + weights)
    gets an `HFCheckpointReader`, anything else a `CheckpointReader`."""
    if is_hf_folder(path):
        return HFCheckpointReader(path)
    return CheckpointReader(path)


def _head_of(name):
    if name.startswith("cls/"):
        return "/".join(name.split("/")[:2])
    return name.split("/")[0] if "/" in name else "root output_weights/output_bias"


def _as_config(config, reader):
    """(AlbertConfig, where it came from); config errors name their source."""
    if isinstance(config, AlbertConfig):
        return config, "AlbertConfig given"
    try:
        if isinstance(config, dict):
            return AlbertConfig.from_dict(config), "dict given"
        if isinstance(config, (str, os.PathLike)):
            return AlbertConfig.from_json_file(config), os.fspath(config)
        if config is not None:
            raise ConversionError(
                "`config` must be an AlbertConfig, a dict or a path to "
                f"albert_config.json. Received: {type(config).__name__}"
            )
        return reader.load_config(), reader.config_path
    except (ValueError, TypeError) as e:
        if isinstance(e, ConversionError):
            raise
        if config is None:
            source = reader.config_path
        elif isinstance(config, dict):
            source = "the config dict given"
        else:
            source = os.fspath(config)
        raise ConversionError(f"Invalid ALBERT config ({source}): {e}") from None


def _warn_about_heads(config):
    # The head count cannot be seen in the 2-D attention kernels.
    if config.hidden_size == 2048 and config.num_hidden_layers == 24:
        warnings.warn(
            "ALBERT-xlarge: the releases disagree on the number of attention "
            "heads (16 in the v1 config and on the hub pages, 32 in the v2 "
            "albert_config.json; albert#180) and the weights cannot tell. Using "
            f"num_attention_heads={config.num_attention_heads} from the config; "
            "pass config= to choose the other.",
            stacklevel=3,
        )


def _model_class(model):
    if isinstance(model, str):
        if model not in MODELS:
            raise ConversionError(
                f"Unknown model. Received: model={model!r}. "
                f"Allowed: {', '.join(MODELS)}, or one of their classes."
            )
        return MODELS[model]
    if isinstance(model, type) and issubclass(model, tuple(MODELS.values())):
        return model
    raise ConversionError(
        "`model` must be a name (" + ", ".join(MODELS) + ") or an albert_keras "
        f"model class. Received: {model!r}"
    )


def _build(cls, config, reader, dtype, task_kwargs):
    if issubclass(cls, AlbertBackbone):
        if task_kwargs:
            raise ConversionError(
                f"A backbone takes no task arguments. Received: {sorted(task_kwargs)}"
            )
        return cls(config, dtype=dtype)
    if issubclass(cls, AlbertClassifier) and "num_classes" not in task_kwargs:
        if "output_weights" not in reader.names:
            raise ConversionError(
                f"{reader.prefix!r} has no run_classifier head (root "
                "`output_weights`) to take num_classes from: pass num_classes=N "
                "to start a new head, or load model='backbone'."
            )
        task_kwargs = dict(task_kwargs, num_classes=reader.shape("output_weights")[0])
    return cls(AlbertBackbone(config, dtype=dtype), **task_kwargs)


def load_official_checkpoint(
    path,
    model="backbone",
    config=None,
    dtype=None,
    **task_kwargs,
):
    """Builds a Keras model and loads a google-research ALBERT TF1 checkpoint.

    Every checkpoint variable is consumed or explicitly ignored: optimizer
    slots and `global_step` are ignored, heads the requested model does not
    have (e.g. `cls/*` for a backbone) are skipped and reported. Every Keras
    weight is assigned exactly once, and all shapes are checked before
    anything is assigned. Anything missing, extra or misshapen raises a
    `ConversionError` naming the variable and the likely cause (a config
    field, a transposed kernel, more groups than the config, ...). A task
    head absent from the checkpoint altogether (a classifier on a pretraining
    release) keeps its initialization and is reported in `new_heads`.

    The number of attention heads is not visible in the weights: it comes
    from the config (with a warning for xlarge, whose releases disagree).

    Args:
        path: release folder, checkpoint prefix (or its `.index` file), TF1
            Hub module folder, or a Hugging Face transformers ALBERT folder
            (`config.json` + `model.safetensors`, as `save_pretrained` writes
            it; read by `HFCheckpointReader`).
        model: "backbone", "pretrainer", "classifier", "span_qa",
            "multiple_choice", or one of the model classes.
        config: `AlbertConfig`, dict of `albert_config.json` fields, or path;
            default: the `albert_config.json` beside the checkpoint or in the
            hub module's `assets/` (a transformers folder: its `config.json`).
        dtype: dtype policy of the model, e.g. "mixed_bfloat16".
        **task_kwargs: task model arguments, e.g. `num_classes` (for a
            classifier it defaults to the rows of the root `output_weights`),
            `num_choices`, `dropout`.

    Returns:
        The model, with `model.conversion_report` (a `ConversionReport`); the
        summary is also logged at INFO level on `checkpoints_convert.loader`.

    Example:
    >>> model = load_official_checkpoint(  # doctest: +SKIP
    ...     "albert_base_v2", model="classifier", num_classes=3
    ... )
    >>> print(model.conversion_report.summary())  # doctest: +SKIP
    """
    reader = open_checkpoint(path)
    config, config_source = _as_config(config, reader)
    official_groups(config)  # attention- or FFN-only sharing: a clear error first
    _warn_about_heads(config)
    keras_model = _build(_model_class(model), config, reader, dtype, task_kwargs)
    entries = official_weights(keras_model)

    present = set(reader.names)
    new_heads = _new_heads(keras_model, entries, present)
    for part in reader.optional_parts:
        if not any(e.name in present for e in entries if e.row.part == part):
            new_heads.append(part)
    if new_heads:
        entries = [e for e in entries if e.row.part not in new_heads]
    problems = _missing_and_misshapen(entries, reader, config)
    used = {e.name for e in entries}
    problems += _unexpected(reader, used, config, keras_model)
    if problems:
        raise ConversionError(
            f"Cannot load {reader.prefix!r} into {type(keras_model).__name__} "
            f"(config: {config_source}):\n" + _format(problems)
        )

    for entry in entries:
        value = reader.read(entry.name)
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)
        entry.variable.assign(value)

    report = ConversionReport(
        checkpoint=reader.prefix,
        prefix_choice=reader.choice,
        config_source=config_source,
        model=type(keras_model).__name__,
        loaded=tuple(e.name for e in entries),
        skipped_heads=tuple(
            n
            for n in reader.names
            if n not in used and reader.is_head(n) and not reader.is_optimizer_state(n)
        )
        + tuple(reader.foreign_heads),
        ignored=tuple(n for n in reader.names if reader.is_optimizer_state(n))
        + tuple(reader.ignored_keys),
        new_heads=tuple(new_heads),
        vocab_path=reader.vocab_path,
    )
    keras_model.conversion_report = report
    logger.info("%s", report.summary())
    return keras_model


def _new_heads(keras_model, entries, present):
    """Heads of the model none of whose variables the checkpoint has."""
    new = []
    for head in model_heads(keras_model):
        names = [e.name for e in entries if e.row.part == head]
        if not any(n in present for n in names):
            new.append(head)
            if head not in _FINE_TUNING_HEADS:
                warnings.warn(
                    f"The checkpoint has no {head} head ({names[0]!r} ...): it "
                    "starts from its random initialization.",
                    stacklevel=3,
                )
    return new


def _missing_and_misshapen(entries, reader, config):
    """(cause, message) for each table variable absent or of the wrong shape."""
    present = set(reader.names)
    stored_groups = _indices(present, r"/transformer/group_(\d+)/")
    stored_inner = _indices(present, r"/inner_group_(\d+)/")
    problems = []
    for entry in entries:
        name = entry.name
        if name not in present:
            problems.append(_missing(name, config, stored_groups, stored_inner))
            continue
        stored = reader.shape(name)
        expected = tuple(entry.variable.shape)
        if entry.row.transform is TRANSPOSE:
            expected = expected[::-1]
        if stored == expected:
            continue
        if len(stored) == 2 and stored == expected[::-1]:
            cause = (
                f"{name!r} looks transposed: the checkpoint has {list(stored)}, "
                f"the official layout is {list(expected)} "
                f"({' x '.join(entry.row.dims)})"
            )
            problems.append((f"transposed:{name}", cause))
            continue
        fields = []  # one per differing field, even if it sizes two dims
        for dim, got, want in zip(entry.row.dims, stored, expected, strict=False):
            label = _DIM_NAMES.get(dim, f"config `{dim}`")
            field = f"{label} is {want} here, {got} in the checkpoint"
            if got != want and field not in fields:
                fields.append(field)
        if len(stored) != len(expected):
            fields.append(f"rank {len(expected)} expected, {len(stored)} stored")
        problems.append(
            (
                f"shape:{','.join(fields)}",
                f"shape mismatch for {name!r}: checkpoint {list(stored)}, model "
                f"{list(expected)}: {'; '.join(fields)}",
            )
        )
    return problems


def _indices(names, pattern):
    return sorted({int(m.group(1)) for n in names if (m := re.search(pattern, n))})


def _missing(name, config, stored_groups, stored_inner):
    group = re.search(r"/group_(\d+)/inner_group_(\d+)/", name)
    if group and stored_groups and int(group.group(1)) not in stored_groups:
        return (
            "groups",
            f"missing variable {name!r}: the checkpoint has groups "
            f"{stored_groups}, the config num_hidden_groups="
            f"{config.num_hidden_groups} (num_hidden_layers="
            f"{config.num_hidden_layers}); check num_hidden_groups",
        )
    if group and stored_inner and int(group.group(2)) not in stored_inner:
        return (
            "inner",
            f"missing variable {name!r}: the checkpoint has inner groups "
            f"{stored_inner}, the config inner_group_num={config.inner_group_num}; "
            "check inner_group_num",
        )
    if "embedding_hidden_mapping_in" in name:
        return (
            "projection",
            f"missing variable {name!r}: the config has embedding_size="
            f"{config.embedding_size} != hidden_size={config.hidden_size}, which "
            "needs this projection; the checkpoint seems to have embedding_size "
            "== hidden_size; check embedding_size",
        )
    return (
        f"missing:{name}",
        f"missing variable {name!r}: not in the checkpoint (a truncated "
        "checkpoint, or one written by other code?)",
    )


def _unexpected(reader, used, config, keras_model):
    """(cause, message) for checkpoint variables nothing takes or ignores."""
    problems = []
    groups = {g for g, _ in official_groups(config)}
    for name in reader.names:
        if name in used or reader.is_optimizer_state(name) or reader.is_head(name):
            continue
        group = re.search(r"/group_(\d+)/inner_group_(\d+)/", name)
        if group and int(group.group(1)) not in groups:
            cause = (
                "groups",
                f"unexpected variable {name!r}: the checkpoint has more groups "
                f"than the config's num_hidden_groups={config.num_hidden_groups}",
            )
        elif group and int(group.group(2)) >= config.inner_group_num:
            cause = (
                "inner",
                f"unexpected variable {name!r}: the checkpoint has more inner "
                f"groups than the config's inner_group_num={config.inner_group_num}",
            )
        elif "embedding_hidden_mapping_in" in name:
            cause = (
                "projection",
                f"unexpected variable {name!r}: the checkpoint projects E -> H "
                f"but the config has embedding_size == hidden_size "
                f"({config.hidden_size}); check embedding_size",
            )
        else:
            cause = (
                f"unknown:{name}",
                f"unexpected variable {name!r}: not an official ALBERT variable "
                f"of a {type(keras_model).__name__}",
            )
        problems.append(cause)
    return problems


def _format(problems):
    """One line per cause: the first variable, and how many more share it."""
    by_cause = {}
    for cause, message in problems:
        by_cause.setdefault(cause, []).append(message)
    lines = []
    for messages in list(by_cause.values())[:_MAX_LISTED]:
        names = [re.search(r"'([^']+)'", m).group(1) for m in messages[1:]]
        more = ""
        if 0 < len(names) <= 3:
            more = " (also " + ", ".join(map(repr, names)) + ")"
        elif names:
            more = f" (and {len(names)} more like it)"
        lines.append(f"  - {messages[0]}{more}")
    if len(by_cause) > _MAX_LISTED:
        lines.append(f"  - ... and {len(by_cause) - _MAX_LISTED} other problems")
    return "\n".join(lines)
