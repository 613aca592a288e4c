"""`OfficialCheckpoint`: find and read a google-research ALBERT checkpoint."""

from __future__ import annotations

import glob
import os
import re
import warnings

import numpy as np
import tensorflow as tf

# Variables a checkpoint may hold that no model weight takes: optimizer state.
IGNORED = re.compile(
    r"(/adam_m$|/adam_v$|/lamb_m$|/lamb_v$|^global_step$|^beta[12]_power|"
    r"^good_steps$|^current_loss_scale$)"
)
# Heads of other tasks: skipped (and reported) when the model has no such head.
HEAD_PREFIXES = (
    "cls/",
    "output_weights",
    "output_bias",
    "start_logits/",
    "end_logits/",
    "answer_class/",
)


class OfficialCheckpoint:
    """A released ALBERT checkpoint: folder, prefix or TF1 Hub module.

    Accepts a release folder (`albert_config.json` and `model.ckpt-best.*`, no
    `checkpoint` state file: the prefix is found from the `*.index` files), a
    checkpoint prefix, a training checkpoint (optimizer slots are ignored), or
    a TF1 Hub module folder (`variables/variables.*`, names with or without
    `module/`, config and vocabulary in `assets/`).

    Args:
        path: the folder or prefix.

    Example:
    >>> checkpoint = OfficialCheckpoint("albert_base_v2/")  # doctest: +SKIP
    >>> checkpoint.prefix, checkpoint.config_path  # doctest: +SKIP
    """

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self.prefix, folder = self._find_prefix(self.path)
        try:
            listed = tf.train.list_variables(self.prefix)
        except (tf.errors.OpError, ValueError) as e:
            raise ValueError(
                f"Cannot read the checkpoint {self.prefix!r}: {e}".strip()
            ) from None
        self._reader = tf.train.load_checkpoint(self.prefix)
        # Hub modules may store names under `module/`; strip it once.
        self._stored = {}
        for name, shape in listed:
            plain = name[len("module/") :] if name.startswith("module/") else name
            self._stored[plain] = (name, tuple(shape))
        self._check_layout()
        self.config_path = self._find_file(folder, "albert_config.json")
        self.vocab_path = self._find_file(folder, "30k-clean.model") or self._find_file(
            folder, "vocab_chinese.txt"
        )

    @staticmethod
    def _find_prefix(path):
        if os.path.isfile(path + ".index"):
            return path, os.path.dirname(path)
        if not os.path.isdir(path):
            raise FileNotFoundError(
                f"No checkpoint at {path!r}: expected a release folder, a TF1 Hub "
                "module folder, or a checkpoint prefix such as "
                "albert_base/model.ckpt-best (with .index and .data-* files)."
            )
        hub = os.path.join(path, "variables", "variables")
        if os.path.isfile(hub + ".index"):
            return hub, path
        indexes = sorted(glob.glob(os.path.join(path, "*.index")))
        if not indexes:
            raise FileNotFoundError(
                f"No checkpoint in {path!r}: no *.index file and no "
                "variables/variables.index (TF1 Hub module)."
            )
        prefixes = [i[: -len(".index")] for i in indexes]
        best = os.path.join(path, "model.ckpt-best")
        if best in prefixes:
            chosen = best
        else:

            def step(prefix):
                match = re.search(r"-(\d+)$", prefix)
                return int(match.group(1)) if match else -1

            chosen = max(prefixes, key=step)
        if len(prefixes) > 1:
            warnings.warn(
                f"{len(prefixes)} checkpoints in {path!r}; using "
                f"{os.path.basename(chosen)} (model.ckpt-best if present, else the "
                "highest step). Pass the prefix to choose another.",
                stacklevel=3,
            )
        return chosen, path

    @staticmethod
    def _find_file(folder, name):
        for candidate in (
            os.path.join(folder, name),
            os.path.join(folder, "assets", name),
        ):
            if os.path.isfile(candidate):
                return candidate
        return None

    def _check_layout(self):
        names = list(self._stored)
        if any(".ATTRIBUTES" in n or n.startswith("layer_with_weights") for n in names):
            raise ValueError(
                f"{self.prefix!r} is an object-based TF2 checkpoint (Model Garden / "
                "TF2 Hub SavedModel variables, names like "
                f"{names[0]!r}), not the google-research TF1 format this "
                "converter reads."
            )
        unshared = [n for n in names if re.search(r"/group_\d+_\d+/", n)]
        if unshared:
            raise ValueError(
                f"{self.prefix!r} holds un-shared TF2 names such as {unshared[0]!r} "
                "(albert#241: a TF2 conversion that unrolled the groups), not the "
                "official group_{g}/inner_group_{i} layout. Not supported."
            )
        brightmart = [
            n
            for n in names
            if "layer_shared" in n or re.search(r"word_embeddings_2$", n)
        ]
        if brightmart:
            raise ValueError(
                f"{self.prefix!r} uses the brightmart albert_zh layout "
                f"({brightmart[0]!r}); only the google-research layout is supported "
                "yet (the official *_zh releases use it)."
            )

    @property
    def names(self) -> list[str]:
        return list(self._stored)

    def shape(self, name) -> tuple:
        return self._stored[name][1]

    def read(self, name) -> np.ndarray:
        return self._reader.get_tensor(self._stored[name][0])

    def is_ignored(self, name) -> bool:
        return bool(IGNORED.search(name))

    def is_head(self, name) -> bool:
        return name.startswith(HEAD_PREFIXES)
