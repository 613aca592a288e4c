"""What stops a checkpoint from loading: each variable missing, misshapen or
unexpected, with its likely cause (a config field, a transposed kernel, more
groups than the config), grouped one line per cause for `ConversionError`."""

from __future__ import annotations

import re

from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.official_layout import official_groups

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


def missing_and_misshapen(entries, reader, config):
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


def unexpected(reader, used, config, keras_model):
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


def format_problems(problems):
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
