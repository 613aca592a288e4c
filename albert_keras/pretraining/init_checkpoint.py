"""The checkpoint an `albert-keras pretrain --init-checkpoint` run continues.

`check_init_checkpoint` refuses a path that cannot hold one before any data
is made; `load_init_pretrainer` loads the `AlbertPretrainer` from it.
"""

from __future__ import annotations

import os

from albert_keras.presets import RELEASE_ARCHIVES


def check_init_checkpoint(init):
    """Refuses an --init-checkpoint that cannot be continued, naming the fix.

    Args:
        init: the flag's value (None when not given): an official checkpoint
            prefix or folder, a TF Hub or transformers folder, or a `.keras`.

    Raises:
        ValueError: a packed release, or a folder without a checkpoint.
        FileNotFoundError: nothing of that name.

    Example:
    >>> check_init_checkpoint("no/such/model.ckpt")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --init-checkpoint 'no/such/model.ckpt' does not exist: ...
    """
    if not init:
        return
    if init.endswith(RELEASE_ARCHIVES) and os.path.isfile(init):
        raise ValueError(
            f"--init-checkpoint {init!r} is a packed release: unpack it (tar xzf "
            f"{init}) and pass the folder, whose vocabulary is then found too."
        )
    if not _checkpoint_exists(init):
        # Before any data is made.
        raise FileNotFoundError(
            f"--init-checkpoint {init!r} does not exist: pass an official "
            "checkpoint (release folder, or prefix such as "
            "albert_base/model.ckpt-best) or the pretrainer.keras of a run."
        )
    if os.path.isdir(init) and not _holds_checkpoint(init):
        from checkpoints_convert.preset_sources import folder_listing

        raise ValueError(
            f"--init-checkpoint {init!r} is a folder without a checkpoint: "
            f"found {folder_listing(init, 8)}. Pass an official release folder "
            "(holding model.ckpt-best.index), a TF Hub or transformers folder, or "
            "the pretrainer.keras of a run."
        )


def _checkpoint_exists(path):
    """Whether `path` is a file, folder or checkpoint prefix (gs:// too, with
    TensorFlow)."""
    from albert_keras.lazy_imports import installed

    if not installed("tensorflow"):
        import glob

        return os.path.exists(path) or bool(glob.glob(glob.escape(path) + "*.index"))
    from tensorflow.io import gfile

    return gfile.exists(path) or bool(gfile.glob(path + "*.index"))


def _holds_checkpoint(folder):
    """Whether a local folder is one `load_official_checkpoint` reads."""
    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.preset_sources import source_kind

    try:
        source_kind(folder)
    except ConversionError:
        return False
    return True


def load_init_pretrainer(path):
    """The `AlbertPretrainer` of --init-checkpoint: a `.keras` or an official one."""
    if not path.endswith(".keras"):
        from checkpoints_convert import load_official_checkpoint

        return load_official_checkpoint(path, model="pretrainer")
    import keras

    import albert_keras.models  # noqa: F401  (registers every task model)
    from albert_keras.models.albert_pretrainer import AlbertPretrainer

    # (`check_input_flags` has checked that it exists.)
    model = keras.saving.load_model(path, compile=False)
    if not isinstance(model, AlbertPretrainer):
        raise ValueError(
            f"--init-checkpoint {path!r} holds a {type(model).__name__}, not an "
            "AlbertPretrainer: continued pretraining needs the MLM and SOP heads. "
            "Pass the pretrainer.keras of `albert-keras pretrain` or an official "
            "checkpoint."
        )
    return model
