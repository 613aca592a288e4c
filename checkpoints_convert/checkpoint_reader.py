"""`CheckpointReader`: find and read a google-research ALBERT TF1 checkpoint."""

from __future__ import annotations

import glob
import os
import re
import warnings

import numpy as np
import tensorflow as tf

from albert_keras.tokenizers.vocabulary_files import vocabulary_beside
from checkpoints_convert.conversion_error import ConversionError

# Training state no model weight takes: the official AdamWeightDecay and LAMB
# slots (`<var>/adam_m`, `<var>/adam_v`), tf.train.AdamOptimizer's slots and
# powers, the step counter, and TF1 mixed-precision loss-scale state.
OPTIMIZER_STATE = re.compile(
    r"(/adam_[mv]$|/Adam(_1)?$|/Momentum$|/ExponentialMovingAverage$|"
    r"^global_step$|^beta[12]_power(_\d+)?$|^good_steps$|^current_loss_scale$|"
    r"^loss_scale(/.*)?$)"
)
# Heads of official tasks: skipped (and reported) when the requested model has
# no such head. SQuAD v2's heads have no counterpart in our models.
HEAD_NAMES = re.compile(
    r"^(cls/|output_weights$|output_bias$|start_logits/|end_logits/|answer_class/|"
    r"token_classifier/)"
)
# Files beside the checkpoint (release tars) or in a hub module's assets/.
CONFIG_FILE = "albert_config.json"


class CheckpointReader:
    """A google-research ALBERT TF1 checkpoint: its prefix, variables and files.

    Accepts a release folder (`albert_config.json` + `model.ckpt-best.*`, no
    `checkpoint` state file: the prefix comes from the `*.index` files; with
    several, `model.ckpt-best` wins, else the highest step, and a warning says
    which), an explicit prefix (or its `.index` / `.data-*` file), a training
    checkpoint (optimizer slots and `global_step` are recognized so they can be
    ignored), or a TF1 Hub module folder (`variables/variables.*`, names with
    or without `module/`, config and vocabulary in `assets/`).

    Layouts this reader does not read are rejected here with a message that
    says which layout was found: TF2 object-based checkpoints (a TF2 Hub
    SavedModel, Model Garden: `ModelGardenCheckpointReader` reads them),
    un-shared TF2 conversions and brightmart's albert_zh (not supported).

    Args:
        path: the folder, prefix or checkpoint file.

    Example:
    >>> reader = CheckpointReader("albert_base_v2/")  # doctest: +SKIP
    >>> reader.prefix, reader.config_path  # doctest: +SKIP
    ('albert_base_v2/model.ckpt-best', 'albert_base_v2/albert_config.json')
    >>> reader.shape("bert/embeddings/word_embeddings")  # doctest: +SKIP
    (30000, 128)
    """

    # What a reader may add to the loader's report; a TF1 checkpoint has none
    # (HFCheckpointReader fills them).
    optional_parts: tuple[str, ...] = ()  # parts that may be absent, left initialized
    foreign_heads: tuple[str, ...] = ()  # heads no albert-keras model has
    ignored_keys: tuple[str, ...] = ()  # stored names no weight takes, checked

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.prefix, self.folder, self.choice = find_prefix(self.path)
        listed, self._reader = open_index(self.prefix)
        self.data_files = check_data_files(self.prefix, self._reader)
        # Hub modules may store names under `module/`; strip it once.
        self._stored = {}
        for name, shape in listed:
            plain = name.removeprefix("module/")
            if plain in self._stored:
                raise ConversionError(
                    f"{self.prefix!r} holds both {name!r} and "
                    f"{self._stored[plain][0]!r}; cannot tell which to use."
                )
            self._stored[plain] = (name, tuple(shape))
        _check_layout(self.prefix, list(self._stored))
        self.config_path = config_beside(self.folder)
        # 30k-clean.model / vocab_chinese.txt in a release, or the one a
        # converted model of ours was written with (`--to-official`).
        self.vocab_path = vocabulary_beside(self.folder)

    def load_config(self):
        """The `AlbertConfig` of the release's `albert_config.json`."""
        from albert_keras.config import AlbertConfig

        if self.config_path is None:
            raise FileNotFoundError(
                f"No albert_config.json beside {self.prefix!r} (or in its "
                "assets/). Pass the release's config: config='albert_config.json'."
            )
        return AlbertConfig.from_json_file(self.config_path)

    @property
    def names(self) -> list[str]:
        """Variable names, without a hub module's `module/` prefix."""
        return list(self._stored)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._stored[name][1]

    def read(self, name: str) -> np.ndarray:
        """The variable's value; `ConversionError` naming the file if unreadable."""
        stored = self._stored[name][0]
        try:
            return self._reader.get_tensor(stored)
        except (tf.errors.OpError, IndexError, ValueError) as e:
            files = " / ".join(map(repr, self.data_files))
            raise ConversionError(
                f"Cannot read {stored!r} {list(self.shape(name))} from {files}: "
                f"{_first_line(e)}. The file is truncated or corrupt; copy or "
                "download the checkpoint again."
            ) from None

    @staticmethod
    def is_optimizer_state(name: str) -> bool:
        """Optimizer slots, `global_step` and loss-scale state."""
        return bool(OPTIMIZER_STATE.search(name))

    @staticmethod
    def is_head(name: str) -> bool:
        """A task head's variable (pretraining, classifier, SQuAD, RACE)."""
        return bool(HEAD_NAMES.search(name))


def config_beside(folder) -> str | None:
    """The `albert_config.json` in `folder` (a release) or in its `assets/`
    (a hub module), else None.

    Example:
    >>> config_beside("no/such/release") is None
    True
    """
    for candidate in (
        os.path.join(folder, CONFIG_FILE),
        os.path.join(folder, "assets", CONFIG_FILE),
    ):
        if os.path.isfile(candidate):
            return candidate
    return None


def find_prefix(path):
    """(prefix, folder of the release files, how the prefix was chosen)."""
    prefix = path
    if not os.path.isdir(path):
        prefix = re.sub(r"(\.index|\.meta|\.data-\d+-of-\d+)$", "", path)
    if os.path.isfile(prefix + ".index"):
        return prefix, os.path.dirname(prefix) or ".", "given"
    _refuse_data_without_index(glob.glob(glob.escape(prefix) + ".data-*"))
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"No checkpoint at {path!r}: expected a release folder, a TF1 Hub "
            "module folder, or a checkpoint prefix such as "
            "albert_base/model.ckpt-best (with .index and .data-* files)."
        )
    hub = os.path.join(path, "variables", "variables")
    if os.path.isfile(hub + ".index"):
        return hub, path, "TF1 Hub module"
    prefixes = sorted(
        i[: -len(".index")]
        for i in glob.glob(os.path.join(glob.escape(path), "*.index"))
    )
    if not prefixes:
        _refuse_data_without_index(
            glob.glob(os.path.join(glob.escape(path), "*.data-*"))
        )
        raise FileNotFoundError(
            f"No checkpoint in {path!r}: no *.index file and no "
            "variables/variables.index (TF1 Hub module)."
        )
    if len(prefixes) == 1:
        return prefixes[0], path, "the only one"
    best = os.path.join(path, "model.ckpt-best")
    if best in prefixes:
        chosen, why, told = best, "model.ckpt-best", "the best one, by its name"
    else:
        chosen, why = max(prefixes, key=_step), "the highest step"
        told = why
    warnings.warn(
        f"{len(prefixes)} checkpoints in {path!r} "
        f"({', '.join(os.path.basename(p) for p in prefixes)}); using "
        f"{os.path.basename(chosen)} ({told}). Pass a prefix to choose another.",
        stacklevel=4,
    )
    return chosen, path, f"{why} of {len(prefixes)}"


def _refuse_data_without_index(data_files):
    """Raises for .data-* files whose .index is missing (they cannot be read)."""
    if data_files:
        data = sorted(data_files)[0]
        index = re.sub(r"\.data-\d+-of-\d+$", ".index", data)
        raise ConversionError(
            f"{index!r} is missing: {data!r} holds the weights, but only "
            "with its .index can they be read. Copy the .index file of the "
            "checkpoint beside it (release tars and hub modules have both)."
        )


def open_index(prefix):
    """(variables and shapes, reader) of the `.index`; names it if unreadable."""
    index = prefix + ".index"
    try:
        return tf.train.list_variables(prefix), tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError, IndexError) as e:
        if _is_lfs_pointer(index):
            cause, fix = "a Git LFS pointer, not the index", "run `git lfs pull`"
        else:
            cause = "corrupt, truncated or not a TF checkpoint index"
            fix = "copy or download the checkpoint again"
        raise ConversionError(
            f"Cannot read the checkpoint index {index!r} ({_first_line(e)}): "
            f"the file is {cause}; {fix}."
        ) from None


def check_data_files(prefix, reader):
    """The `.data-*` shards of `prefix`, checked present and long enough."""
    found = {}
    for path in glob.glob(glob.escape(prefix) + ".data-*-of-*"):
        match = re.search(r"\.data-(\d+)-of-(\d+)$", path)
        if match:
            found[int(match.group(1))] = (path, int(match.group(2)))
    shards = max((n for _, n in found.values()), default=1)
    missing = [i for i in range(shards) if i not in found]
    if missing:
        more = f" (and {len(missing) - 1} more shards)" if len(missing) > 1 else ""
        raise ConversionError(
            f"'{prefix}.data-{missing[0]:05d}-of-{shards:05d}' is missing{more}: "
            f"'{prefix}.index' lists variables stored there. Copy or download "
            "the checkpoint's .data-* files beside its .index."
        )
    files = [found[i][0] for i in sorted(found)]
    _check_data_size(prefix, reader, files)
    return files


def _check_data_size(prefix, reader, files):
    """Refuses shards shorter than the variables the index lists (truncated)."""
    dtypes = reader.get_variable_to_dtype_map()
    if any(not d.is_numpy_compatible or d == tf.string for d in dtypes.values()):
        return  # variable-length entries: no size to expect
    shapes = reader.get_variable_to_shape_map()
    expected = sum(
        dtypes[n].size * int(np.prod(shapes[n], dtype=np.int64)) for n in dtypes
    )
    size = sum(os.path.getsize(f) for f in files)
    if size >= expected:
        return
    if any(_is_lfs_pointer(f) for f in files):
        cause, fix = "a Git LFS pointer, not the weights", "run `git lfs pull`"
    else:
        cause, fix = "truncated", "copy or download the checkpoint again"
    raise ConversionError(
        f"{' / '.join(map(repr, files))} is {cause}: {size} bytes, but "
        f"'{prefix}.index' lists {expected} bytes of variables; {fix}."
    )


def _is_lfs_pointer(path):
    try:
        with open(path, "rb") as f:
            return f.read(40).startswith(b"version https://git-lfs")
    except OSError:
        return False


def _first_line(error):
    lines = getattr(error, "message", None) or str(error) or type(error).__name__
    return lines.strip().splitlines()[0]


def _step(prefix):
    match = re.search(r"-(\d+)$", prefix)
    return (int(match.group(1)) if match else -1, prefix)


def _check_layout(prefix, names):
    """Rejects checkpoint layouts other than google-research's, by name."""
    object_based = [
        n
        for n in names
        if ".ATTRIBUTES" in n
        or n.startswith(("layer_with_weights-", "_CHECKPOINTABLE_OBJECT_GRAPH"))
        or "/layer_with_weights-" in n
    ]
    if object_based:
        raise ConversionError(
            f"{prefix!r} is an object-based TF2 checkpoint (names such as "
            f"{object_based[0]!r}), not the google-research TF1 format. Pass "
            "its prefix itself (a folder that also holds TF1 checkpoints is "
            "read as TF1): albert-convert and load_official_checkpoint then "
            "read it as a TF2 Hub / Model Garden checkpoint."
        )
    unshared = [n for n in names if re.search(r"(^|/)group_\d+_\d+/", n)]
    if unshared:
        raise ConversionError(
            f"{prefix!r} holds un-shared TF2 names such as {unshared[0]!r} (a "
            "TF2 conversion that unrolled the shared groups per layer, "
            "albert#241), not the official group_{g}/inner_group_{i} layout. "
            "Not supported; convert the original TF1 release instead."
        )
    brightmart = [
        n for n in names if "layer_shared" in n or re.search(r"word_embeddings_2$", n)
    ]
    if brightmart:
        raise ConversionError(
            f"{prefix!r} uses the brightmart albert_zh layout (names such as "
            f"{brightmart[0]!r}): the brightmart layout is not supported yet. "
            "The google-research albert_*_zh releases load."
        )
