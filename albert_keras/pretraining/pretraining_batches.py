"""`PretrainingBatches`: NumPy pretraining instances -> `fit` batches, no TF."""

from __future__ import annotations

import sys

import keras
import numpy as np

from albert_keras.models.albert_pretrainer import AlbertPretrainer


class PretrainingBatches(keras.utils.PyDataset):
    """Batches of `(x, y)` for `AlbertPretrainer.fit` from arrays of instances.

    The input pipeline of `run_pretraining` where TensorFlow is not installed
    (JAX or torch): the instances of `create_pretraining_arrays` in memory, a
    batch computed from its index alone. Training batches go through the
    instances in a fresh seeded permutation at every pass, so batch `i` is the
    same in every run and a resumed run starts at `skip` without reading what
    came before. Training batches all have the same shape (the last partial
    batch of a pass is dropped), as XLA on a TPU wants. A held-out pass
    (`steps=None`) on one device can keep its last partial batch
    (`keep_partial`), so every instance is scored as on TensorFlow; split
    over devices, batches stay whole. In a multi-process JAX job each process
    gets its rows of the global batch (Keras assembles the global array).

    Args:
        features: official feature name -> array with one row per instance.
        batch_size: the global batch.
        steps: batches to serve, `None` for one pass in order (held-out sets).
        skip: batches already trained on (a resumed run), for training.
        seed: the permutation seed; `None` keeps the instances in order.
        keep_partial: a held-out pass keeps its last partial batch (for a
            job on one device: a batch split over devices must divide
            evenly).

    Example:
    >>> n, length = 10, 8
    >>> features = {
    ...     "input_ids": np.ones((n, length), "int32"),
    ...     "input_mask": np.ones((n, length), "int32"),
    ...     "segment_ids": np.zeros((n, length), "int32"),
    ...     "masked_lm_positions": np.ones((n, 2), "int32"),
    ...     "masked_lm_ids": np.ones((n, 2), "int32"),
    ...     "masked_lm_weights": np.ones((n, 2), "float32"),
    ...     "next_sentence_labels": np.zeros((n, 1), "int32"),
    ... }
    >>> batches = PretrainingBatches(features, batch_size=4, steps=5, seed=0)
    >>> len(batches), batches[0][0]["token_ids"].shape
    (5, (4, 8))
    >>> held_out = PretrainingBatches(features, batch_size=4, keep_partial=True)
    >>> [x["token_ids"].shape[0] for x, y in held_out]
    [4, 4, 2]
    """

    def __init__(
        self, features, batch_size, steps=None, skip=0, seed=None, keep_partial=False
    ):
        super().__init__()
        self.features = {k: np.asarray(v) for k, v in features.items()}
        self.instances = len(self.features["input_ids"])
        self.batch_size = batch_size
        self.partial = keep_partial and steps is None
        self.per_pass = (
            self.instances + batch_size - 1 if self.partial else self.instances
        ) // batch_size
        if self.per_pass == 0:
            kind = "held-out " if steps is None else ""
            raise ValueError(
                f"{self.instances} {kind}instances cannot fill one batch of "
                f"{batch_size}: use a smaller --batch-size, or more text (--input, "
                "--dupe-factor)."
            )
        self.steps = self.per_pass if steps is None else steps
        self.skip = skip
        self.seed = seed
        self._order = (None, None)  # (pass, permutation), the last one used

    def __len__(self):
        return max(self.steps - self.skip, 0)

    def _rows(self, batch):
        """The instance rows of global batch number `batch`."""
        position = batch % self.per_pass
        end = min((position + 1) * self.batch_size, self.instances)
        rows = np.arange(position * self.batch_size, end)
        if self.seed is None:
            return rows
        epoch = batch // self.per_pass
        if self._order[0] != epoch:
            rng = np.random.default_rng([self.seed, epoch])
            self._order = (epoch, rng.permutation(self.instances))
        return self._order[1][rows]

    def __getitem__(self, index):
        return self._batch(index, split=True)

    def _batch(self, index, split):
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        rows = self._rows(self.skip + index)
        process, processes = _jax_process()
        if split and processes > 1:
            rows = np.array_split(rows, processes)[process]
        batch = {k: v[rows] for k, v in self.features.items()}
        return AlbertPretrainer.features_to_xy(batch)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def global_batches(self):
        """The whole batches, also in a multi-process job (for statistics)."""
        return (self._batch(i, split=False) for i in range(len(self)))


def _jax_process():
    """(process index, process count) of a JAX job; (0, 1) otherwise."""
    jax = sys.modules.get("jax")
    if jax is None or keras.backend.backend() != "jax":
        return 0, 1
    return jax.process_index(), jax.process_count()
