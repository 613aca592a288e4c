"""`file_states`, `written_since`: which files a conversion wrote in a folder.

`albert-convert --to-hf` / `--to-keras-hub` may write into a folder that also
holds the user's own files (a run folder): its "wrote ..." line names only
the files that are new or changed, not everything in the folder. A checkpoint
of another kind there is refused (`refuse_another_checkpoint`).
"""

from __future__ import annotations

import os


def file_states(folder) -> dict:
    """{name: (inode, size, mtime)} of the entries of `folder` ({} if none).

    Example:
    >>> file_states("no/such/folder")
    {}
    """
    if not os.path.isdir(folder):
        return {}
    states = {}
    for name in os.listdir(folder):
        st = os.stat(os.path.join(folder, name))
        states[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return states


def written_since(folder, before) -> list:
    """The names in `folder` new or changed since `file_states` gave `before`.

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> before = file_states(folder)
    >>> open(os.path.join(folder, "config.json"), "w").close()
    >>> written_since(folder, before)
    ['config.json']
    """
    after = file_states(folder)
    return sorted(name for name, state in after.items() if before.get(name) != state)


def refuse_another_checkpoint(folder, kind: str) -> None:
    """`ConversionError` where `folder` already holds a checkpoint of another
    kind than `kind` (a key of `preset_sources.KINDS`): the two would lie mixed,
    and converting the folder back would read one of them without a word.

    Example:
    >>> refuse_another_checkpoint("no/such/folder", "transformers")
    """
    from checkpoints_convert.conversion_error import ConversionError
    from checkpoints_convert.preset_sources import KINDS, source_kind

    if not os.path.isdir(folder):
        return
    try:
        found = source_kind(folder)
    except ConversionError:
        return  # no checkpoint there (a run folder, say)
    if found != kind:
        raise ConversionError(
            f"The output folder {os.fspath(folder)!r} already holds {KINDS[found]}: "
            f"writing {KINDS[kind]} there would mix the two, and converting the "
            "folder back would read only one of them. Give a new or empty folder "
            "as the output."
        )
