"""`load_official_checkpoint`: a google-research TF1 checkpoint (or a transformers
ALBERT folder, read under the official names) as a Keras model."""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings

from albert_keras.config import AlbertConfig
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertPretrainer,
    AlbertSpanQA,
    AlbertSquadV2,
    AlbertTokenClassifier,
)
from checkpoints_convert.checkpoint_problems import (
    format_problems,
    missing_and_misshapen,
    unexpected,
)
from checkpoints_convert.checkpoint_reader import CheckpointReader
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.conversion_report import ConversionReport
from checkpoints_convert.hf_checkpoint_reader import HFCheckpointReader, is_hf_folder
from checkpoints_convert.keras_file_loader import (
    as_model_class,
    keras_file_report,
    read_keras_file,
)
from checkpoints_convert.keras_hub_preset_reader import (
    KerasHubPresetReader,
    is_keras_hub_preset,
)
from checkpoints_convert.model_garden_reader import (
    ModelGardenCheckpointReader,
    holds_object_based,
)
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import (
    model_heads,
    official_groups,
    official_weights,
)
from checkpoints_convert.preset_sources import (
    incomplete_folder,
    is_keras_file,
    is_release_tar,
    run_part,
    unpacked,
)

logger = logging.getLogger(__name__)

MODELS = {
    "backbone": AlbertBackbone,
    "pretrainer": AlbertPretrainer,
    "classifier": AlbertClassifier,
    "span_qa": AlbertSpanQA,
    "squad_v2": AlbertSquadV2,
    "multiple_choice": AlbertMultipleChoice,
    "token_classifier": AlbertTokenClassifier,
}
# Task heads a release usually lacks: a fine-tuning head starts fresh. A
# missing pretraining head is unusual (TF1 Hub modules without the SOP head,
# transformers#12196), so it starts fresh too, with a warning.
_FINE_TUNING_HEADS = (
    "classifier",
    "span_qa",
    "squad_v2",
    "multiple_choice",
    "token_classifier",
)
# The models whose head size is `num_classes`: (head part, its weight's name).
_CLASS_HEADS = {
    AlbertClassifier: ("classifier", "output_weights"),
    AlbertTokenClassifier: ("token_classifier", "token_classifier/output_weights"),
}


def open_checkpoint(path):
    """The reader for `path`: a keras-hub preset folder gets a
    `KerasHubPresetReader`, a transformers folder (`config.json` + weights) an
    `HFCheckpointReader`, a TF2 object-based one (a TF2 Hub SavedModel, Model
    Garden) a `ModelGardenCheckpointReader`, anything else a `CheckpointReader`."""
    if is_keras_hub_preset(path):
        return KerasHubPresetReader(path)
    if is_hf_folder(path):
        return HFCheckpointReader(path)
    incomplete = run_part(path) or incomplete_folder(path)
    if incomplete:
        raise ConversionError(incomplete)
    if holds_object_based(path):
        return ModelGardenCheckpointReader(path)
    return CheckpointReader(path)


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
    head = _class_head(cls)
    if head and "num_classes" not in task_kwargs:
        part, name = head
        if name not in reader.names:
            raise ConversionError(
                f"{reader.prefix!r} has no {part} head (`{name}`) to take "
                "num_classes from: pass num_classes=N (--num-classes) to start "
                f"a new head, or load model='backbone'.{_other_head(reader, part)}"
            )
        task_kwargs = dict(task_kwargs, num_classes=reader.shape(name)[0])
        if issubclass(cls, AlbertClassifier) and getattr(reader, "multi_label", False):
            task_kwargs.setdefault("multi_label", True)  # its head, read as saved
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

    The head count comes from the config (warned about for xlarge, whose
    releases disagree); Model Garden's 3-D kernels show it and are checked.

    Args:
        path: release folder, checkpoint prefix (or its `.index` file), TF1
            Hub module folder, a Hugging Face transformers ALBERT folder
            (`config.json` + `model.safetensors`, as `save_pretrained` writes
            it; read by `HFCheckpointReader`), a keras-hub preset folder, or
            a TF2 Hub SavedModel folder or Model Garden checkpoint (read by
            `ModelGardenCheckpointReader`).
            As `from_preset`, also a release `.tar.gz` (unpacked for the
            load; the report names the files in it and has no `vocab_path`)
            or a `.keras` file of ours (its model, or its backbone under the
            head asked for; the report lists Keras weight paths).
        model: "backbone", "pretrainer", "classifier", "span_qa",
            "squad_v2", "multiple_choice", "token_classifier", or one of the
            model classes.
        config: `AlbertConfig`, dict of `albert_config.json` fields, or path;
            default: the `albert_config.json` beside the checkpoint or in the
            hub module's `assets/` (a transformers folder: its `config.json`).
        dtype: dtype policy of the model, e.g. "mixed_bfloat16".
        **task_kwargs: task model arguments, e.g. `num_classes` (for a
            classifier it defaults to the rows of the root `output_weights`,
            for a token classifier to those of `token_classifier/output_weights`;
            another number gives a new head, the checkpoint's skipped, as
            keras-hub's `from_preset`), `num_choices`, `dropout`.

    Returns:
        The model, with `model.conversion_report` (a `ConversionReport`); the
        summary is also logged at INFO level on `checkpoints_convert.loader`.

    Example:
    >>> model = load_official_checkpoint(  # doctest: +SKIP
    ...     "albert_base_v2", model="classifier", num_classes=3
    ... )
    >>> print(model.conversion_report.summary())  # doctest: +SKIP
    """
    if is_release_tar(path):
        return _from_release_tar(path, model, config, dtype, task_kwargs)
    if is_keras_file(path):
        return _from_keras_file(path, model, config, dtype, task_kwargs)
    reader = open_checkpoint(path)
    config, config_source = _as_config(config, reader)
    official_groups(config)  # attention- or FFN-only sharing: a clear error first
    if isinstance(reader, ModelGardenCheckpointReader):
        reader.check_heads(config)  # its 3-D kernels show the head count
    else:
        _warn_about_heads(config)
    keras_model = _build(_model_class(model), config, reader, dtype, task_kwargs)
    entries = official_weights(keras_model)

    present = set(reader.names)
    new_heads = _new_heads(keras_model, entries, present)
    new_heads += _resized_classifier(
        keras_model, reader, present, task_kwargs, new_heads
    )
    for part in reader.optional_parts:
        if not any(e.name in present for e in entries if e.row.part == part):
            new_heads.append(part)
    if new_heads:
        entries = [e for e in entries if e.row.part not in new_heads]
    problems = missing_and_misshapen(entries, reader, config)
    used = {e.name for e in entries}
    problems += unexpected(reader, used, config, keras_model)
    if problems:
        raise ConversionError(
            f"Cannot load {reader.prefix!r} into {type(keras_model).__name__} "
            f"(config: {config_source}):\n" + format_problems(problems)
        )

    for entry in entries:
        value = reader.read(entry.name)
        if entry.row.transform is TRANSPOSE:
            value = TRANSPOSE(value)
        entry.variable.assign(value)

    report = _report(reader, config_source, keras_model, entries, new_heads)
    keras_model.conversion_report = report
    logger.info("%s", report.summary())
    return keras_model


def _report(reader, config_source, keras_model, entries, new_heads):
    """The `ConversionReport` of a load from `reader`."""
    used = {e.name for e in entries}
    return ConversionReport(
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


def _from_release_tar(path, model, config, dtype, task_kwargs):
    """A release `.tar.gz`, unpacked for the load; the report names the tar."""
    with unpacked(path) as folder:
        keras_model = load_official_checkpoint(
            folder, model, config, dtype, **task_kwargs
        )
    report = keras_model.conversion_report
    keras_model.conversion_report = dataclasses.replace(
        report,
        checkpoint=_in_tar(report.checkpoint, folder, path),
        config_source=_in_tar(report.config_source, folder, path),
        vocab_path=None,  # unpacked for the load only
    )
    return keras_model


def _in_tar(name, folder, tar):
    """`name`, a path in the unpacked `folder`, as a file of `tar`."""
    if not name.startswith(folder + os.sep):
        return name
    return f"{os.path.relpath(name, folder)} in {os.fspath(tar)}"


def _from_keras_file(path, model, config, dtype, task_kwargs):
    """A `.keras` file of ours, as `from_preset` loads it, with a report."""
    if config is not None:
        raise ConversionError(
            f"{os.fspath(path)!r} is a .keras file, which keeps the config it "
            "was saved with: load it without config=, or convert the "
            "checkpoint it came from with that config."
        )
    saved = read_keras_file(path, dtype)
    try:
        keras_model = as_model_class(saved, _model_class(model), True, task_kwargs)
    except TypeError as e:
        raise ConversionError(str(e)) from None
    keras_model.conversion_report = keras_file_report(path, saved, keras_model)
    logger.info("%s", keras_model.conversion_report.summary())
    return keras_model


def _class_head(cls):
    """(head part, its weight's name) of a classifier class (or subclass)."""
    return next((h for k, h in _CLASS_HEADS.items() if issubclass(cls, k)), None)


def _other_head(reader, part):
    """A hint where the checkpoint holds the other classifier's head."""
    for other, name in _CLASS_HEADS.values():
        if other != part and name in reader.names:
            return f" It has a {other} head: load model={other!r}."
    return ""


def _resized_classifier(keras_model, reader, present, task_kwargs, new_heads):
    """[the head] when `num_classes` is given and differs from the
    checkpoint's classifier (or token classifier): a new head, the
    checkpoint's skipped (as keras-hub's `from_preset(..., num_classes=N)` and
    a `.keras` file do), not a shape mismatch."""
    wanted = task_kwargs.get("num_classes")
    head = _class_head(type(keras_model))
    if wanted is None or not head:
        return []
    part, name = head
    if part in new_heads or name not in present:
        return []
    return [part] if reader.shape(name)[0] != wanted else []


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
