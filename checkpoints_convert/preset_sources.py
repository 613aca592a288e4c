"""What a preset is: a cached bare name, or a path whose kind is detected.

`resolve_preset` turns a bare name into its cached weights (or refuses with
the release URL and the command that fills the cache); `source_kind` names
what a path holds; `unpacked` opens an official release `.tar.gz`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tarfile
import tempfile

from albert_keras.presets import RELEASE_ARCHIVES
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_checkpoint_reader import is_hf_folder
from checkpoints_convert.keras_hub_preset_reader import is_keras_hub_preset
from checkpoints_convert.model_garden_reader import holds_object_based

RELEASE_URL = "https://storage.googleapis.com/albert_models/{name}.tar.gz"
HOME_VARIABLE = "ALBERT_KERAS_HOME"
KINDS = {
    "keras": "a .keras file of albert-keras",
    "keras_hub": "a keras-hub preset folder (config.json + model.weights.h5)",
    "official": "an official release folder or checkpoint prefix (*.index)",
    "tf1_hub": "a TF1 Hub module folder (variables/variables.index)",
    "model_garden": "a TF2 Hub SavedModel folder or Model Garden checkpoint (TF2)",
    "official_tar": "an official release .tar.gz",
    "transformers": "a transformers folder (config.json + model.safetensors)",
}


def preset_home() -> str:
    """Where bare preset names find their weights: `$ALBERT_KERAS_HOME`, else
    `~/.cache/albert_keras`.

    Example:
    >>> preset_home().endswith("albert_keras") or "ALBERT_KERAS_HOME" in os.environ
    True
    """
    home = os.environ.get(HOME_VARIABLE)
    return home or os.path.join(os.path.expanduser("~"), ".cache", "albert_keras")


def _canonical_name(preset):
    from albert_keras.presets import ALIASES, PRESETS

    if not isinstance(preset, str) or os.path.exists(preset):
        return None
    name = ALIASES.get(preset, preset)
    return name if name in PRESETS else None


def has_release(preset) -> bool:
    """Whether `preset` names an official release (the `_v1`, `_v2`, `_zh`
    presets and their aliases), whose weights a bare name loads.

    Example:
    >>> has_release("base"), has_release("albert_small")
    (True, False)
    """
    from albert_keras.presets import ALIASES, PRESETS

    if not isinstance(preset, str):
        return False
    name = ALIASES.get(preset, preset)
    return name in PRESETS and name.endswith(("_v1", "_v2", "_zh"))


def resolve_preset(preset, random_hint=None) -> str:
    """The path to load for `preset`: itself, or a bare name's cached weights.

    A bare name ("albert_base_v2", "base") is looked up in `preset_home()`
    as `<name>.keras`, a folder `<name>/` of any kind `source_kind` knows,
    or `<name>.tar.gz`. Without them: `FileNotFoundError` with the official
    release's URL and the `albert-convert` command that fills the cache.

    Args:
        preset: a bare name or a path.
        random_hint: the message's last sentence, on how to get random
            weights instead (default: `from_preset`'s `load_weights=False`).

    Example:
    >>> resolve_preset("model.keras")
    'model.keras'
    """
    name = _canonical_name(preset)
    if name is None:
        return os.fspath(preset)
    home = preset_home()
    for candidate in (f"{name}.keras", name, f"{name}.tar.gz"):
        path = os.path.join(home, candidate)
        if os.path.exists(path):
            return path
    random = random_hint or (
        f"A randomly initialised model of that size: "
        f"from_preset({preset!r}, load_weights=False)."
    )
    raise FileNotFoundError(_no_local_weights(preset, name, home, random))


def _no_local_weights(preset, name, home, random):
    looked = (
        f"No local weights for preset {preset!r}: looked for {name}.keras, "
        f"{name}/ and {name}.tar.gz in {home} (set ${HOME_VARIABLE} to look "
        "elsewhere)."
    )
    if not name.endswith(("_v1", "_v2", "_zh")):
        return f"{looked} {name} has no official release. {random}"
    url = RELEASE_URL.format(name=name)
    target = os.path.join(home, f"{name}.keras")
    return (
        f"{looked} Download the official release ({url}) and convert it once:\n"
        f"  curl -LO {url}\n"
        f"  albert-convert {name}.tar.gz --output {target}\n"
        f"{random}"
    )


def source_kind(path) -> str:
    """Which of `KINDS` `path` is; `ConversionError` naming what was found.

    Example:
    >>> source_kind("albert_base_v2.tar.gz")  # doctest: +SKIP
    'official_tar'
    """
    path = os.fspath(path)
    if is_keras_file(path):
        return "keras"
    if is_release_tar(path):
        return "official_tar"
    if os.path.isdir(path):
        if part := run_part(path):  # backup/, savedmodel/ ... of a run
            raise ConversionError(part)
        if is_keras_hub_preset(path):
            return "keras_hub"
        if is_hf_folder(path):
            return "transformers"
        if holds_object_based(path):
            return "model_garden"
        if os.path.isfile(os.path.join(path, "variables", "variables.index")):
            return "tf1_hub"
        if glob.glob(os.path.join(path, "*.index")):
            return "official"
    elif glob.glob(path + "*.index") or path.endswith(".index"):
        return "model_garden" if holds_object_based(path) else "official"
    raise ConversionError(_unknown_kind(path))


# A run folder's own subfolders (fine-tuning and `albert-keras pretrain`):
# none is a model, though some hold checkpoint files.
RUN_PARTS = {
    "backup": "the fine-tuning backups (for resuming)",
    "checkpoints": "the pretraining checkpoints (for resuming)",
    "savedmodel": "the SavedModel (for serving)",
    "logs": "the TensorBoard logs",
    "data": "the pretraining data",
}
RUN_MODELS = ("pretrainer.keras", "best.keras")  # a pretraining run's first
# The parts whose subfolders the run writes too (backup/epoch-0001/,
# savedmodel/variables/): a folder the user keeps under data/ or checkpoints/
# (a release, a keras-hub preset) is no part of the run.
RUN_NESTED_PARTS = ("backup", "savedmodel")


def run_part(path) -> str | None:
    """Why `path` is no model when it is a folder inside a run folder (its
    backups, checkpoints, SavedModel, logs or data), naming the run's model
    to pass instead; else None.

    Example:
    >>> import tempfile
    >>> run = tempfile.mkdtemp()
    >>> open(os.path.join(run, "best.keras"), "w").close()
    >>> os.makedirs(os.path.join(run, "backup", "epoch-0001"))
    >>> run_part(os.path.join(run, "backup", "epoch-0001"))  # doctest: +ELLIPSIS
    "... is inside the fine-tuning backups (for resuming) of the run ...best.keras'."
    """
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path):
        return None
    for part in (path, os.path.dirname(path)):  # backup/ or backup/epoch-0001/
        run, name = os.path.split(part)
        models = [m for m in RUN_MODELS if os.path.isfile(os.path.join(run, m))]
        nested = part == path or name in RUN_NESTED_PARTS
        if name in RUN_PARTS and nested and models:
            where = "holds" if part == path else "is inside"
            return (
                f"{os.path.relpath(path)!r} {where} {RUN_PARTS[name]} of the run "
                f"{os.path.relpath(run)!r}, not a model: pass the run's model, "
                f"{os.path.relpath(os.path.join(run, models[0]))!r}."
            )
    return None


def incomplete_folder(path) -> str | None:
    """Why `path` is a transformers or keras-hub folder with a file missing
    (copied halfway, say), else None: such a folder is no TF1 checkpoint.

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, "model.safetensors"), "w").close()
    >>> incomplete_folder(folder)  # doctest: +ELLIPSIS
    "... looks like a transformers folder (model.safetensors) but has no config.json..."
    """
    path = os.fspath(path)
    if not os.path.isdir(path) or glob.glob(os.path.join(glob.escape(path), "*.index")):
        return None  # a TF1 checkpoint, whatever else lies beside it
    names = set(os.listdir(path))
    hf_weights = sorted(names & {"model.safetensors", "pytorch_model.bin"})
    hf_weights += sorted(names & {"model.safetensors.index.json"})
    hub_files = sorted(names & {"metadata.json", "task.json", "preprocessor.json"})
    if "config.json" not in names and hf_weights:
        kind, missing = f"a transformers folder ({hf_weights[0]})", "no config.json"
    elif "config.json" not in names and "model.weights.h5" in names:
        kind, missing = "a keras-hub preset folder", "no config.json"
    elif "config.json" in names and hub_files and not is_keras_hub_preset(path):
        kind, missing = "a keras-hub preset folder", "no model.weights.h5"
    elif "config.json" in names and not (is_hf_folder(path) or hub_files):
        kind = "a transformers folder (config.json)"
        missing = "no weights (model.safetensors or pytorch_model.bin)"
    else:
        return None
    return (
        f"{path!r} looks like {kind} but has {missing}: was it copied or "
        "written only in part? Copy the whole folder again (save_pretrained "
        "and save_to_preset write both the config and the weights)."
    )


def _unknown_kind(path):
    incomplete = incomplete_folder(path)
    if incomplete:
        return incomplete
    if not os.path.exists(path):
        found = "nothing (no such file or folder)"
        if close := near_preset(path):
            return f"{path!r} is neither a path nor a preset: did you mean {close!r}?"
    elif os.path.isdir(path):
        found = "a folder holding " + folder_listing(path)
    else:
        found = f"a file of {os.path.getsize(path)} bytes"
    models = sorted(glob.glob(os.path.join(glob.escape(path), "*.keras")))
    hint = f" Pass its model file: {models[0]}." if models else ""
    return (
        f"Cannot tell what {path!r} is: found {found}. Expected "
        + "; ".join(KINDS.values())
        + f", or a preset name.{hint}"
    )


def near_preset(path) -> str | None:
    """The preset name `path` is a typo of, or None (`near_miss` on the
    preset names and aliases)."""
    from albert_keras.config_checks import near_miss
    from albert_keras.presets import ALIASES, PRESETS

    return near_miss(path, set(PRESETS) | set(ALIASES))


def folder_listing(folder, shown: int = 12) -> str:
    """The names in `folder`, sorted: the first `shown` and how many more.

    Example:
    >>> import tempfile
    >>> folder_listing(tempfile.mkdtemp())
    'no files'
    """
    names = sorted(os.listdir(folder))
    listed = ", ".join(names[:shown]) or "no files"
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def is_keras_file(path) -> bool:
    """Whether `path` is an existing `.keras` file."""
    return isinstance(path, (str, os.PathLike)) and (
        os.path.isfile(path) and os.fspath(path).endswith(".keras")
    )


def is_release_tar(path) -> bool:
    """Whether `path` is a `.tar.gz` / `.tgz` / `.tar` file (a release)."""
    return isinstance(path, (str, os.PathLike)) and (
        os.path.isfile(path) and os.fspath(path).endswith(RELEASE_ARCHIVES)
    )


def readable_folder(path):
    """A context giving `path` readable in place: a release `.tar.gz`
    unpacked for the block (`unpacked`), anything else unchanged."""
    if is_release_tar(path):
        return unpacked(path)
    return contextlib.nullcontext(path)


@contextlib.contextmanager
def unpacked(path):
    """The folder of an official release `.tar.gz`, unpacked for the block.

    The release tars hold one folder (`albert_base/`), TF1 Hub tars the module
    itself; both are found. Only regular files and folders are unpacked.
    """
    with tempfile.TemporaryDirectory(prefix="albert_release_") as folder:
        try:
            with tarfile.open(path) as tar:
                tar.extractall(folder, filter="data")
        except (tarfile.TarError, OSError) as e:
            raise ConversionError(f"Cannot unpack {path!r}: {e}") from None
        entries = [os.path.join(folder, n) for n in os.listdir(folder)]
        if len(entries) == 1 and os.path.isdir(entries[0]):
            folder = entries[0]
        yield folder
