"""`LossCurvePlot`: a PNG of the loss and accuracy curves, redrawn every epoch."""

from __future__ import annotations

import keras

from albert_keras.atomic_files import save_atomically


class LossCurvePlot(keras.callbacks.Callback):
    """Draws every `*loss` and `*accuracy` of the logs against the epoch.

    Losses on the left panel, accuracies (and the other `scores`) on the
    right; validation values dashed. Redrawn at each epoch end, so the
    picture exists after a kill too.

    Args:
        path: the PNG to write.
        title: the figure title.
        scores: log names plotted on the right besides `*accuracy`, e.g.
            ("f1", "pearson").

    Example:
    >>> plot = LossCurvePlot("/tmp/curves.png")
    """

    def __init__(self, path: str, title: str = "ALBERT training", scores=(), rows=()):
        super().__init__()
        self.path = path
        self.title = title
        self.scores = ("accuracy", *scores)
        self.history: dict[str, list[float]] = {}
        self.epochs: list[int] = []
        for row in rows:  # the epochs before a resume (`history.csv` rows)
            self._add(row["epoch"], {k: v for k, v in row.items() if k != "epoch"})

    def _add(self, epoch, logs):
        if epoch in self.epochs:  # an epoch run again after a resume
            index = self.epochs.index(epoch)
            self.epochs = self.epochs[:index]
            self.history = {k: v[:index] for k, v in self.history.items()}
        self.epochs.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))

    def on_epoch_end(self, epoch, logs=None):
        self._add(epoch, logs)
        self.draw()

    def draw(self):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        for key, values in sorted(self.history.items()):
            axis = left if key.endswith("loss") else right
            if not (key.endswith("loss") or key.endswith(self.scores)):
                continue
            style = "--" if key.startswith("val_") else "-"
            epochs = [e + 1 for e in self.epochs[-len(values) :]]
            axis.plot(epochs, values, style, label=key)
        for axis, name in ((left, "loss"), (right, " / ".join(self.scores))):
            axis.set_xlabel("epoch")
            axis.set_ylabel(name)
            axis.grid(alpha=0.3)
            if axis.lines:
                axis.legend(fontsize=8)
        fig.suptitle(self.title)
        fig.tight_layout()
        save_atomically(
            self.path, lambda path: fig.savefig(path, dpi=100, format="png")
        )
        plt.close(fig)
