"""`file_states`, `written_since`: which files a conversion wrote in a folder.

`albert-convert --to-hf` / `--to-keras-hub` may write into a folder that also
holds the user's own files (a run folder): its "wrote ..." line names only
the files that are new or changed, not everything in the folder.
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
