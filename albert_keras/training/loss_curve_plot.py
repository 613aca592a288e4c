"""`LossCurvePlot`: a PNG of the loss and accuracy curves, redrawn every epoch."""

from __future__ import annotations

import keras


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

    def __init__(self, path: str, title: str = "ALBERT training", scores=()):
        super().__init__()
        self.path = path
        self.title = title
        self.scores = ("accuracy", *scores)
        self.history: dict[str, list[float]] = {}
        self.epochs: list[int] = []

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(epoch + 1)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
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
            axis.plot(self.epochs[-len(values) :], values, style, label=key)
        for axis, name in ((left, "loss"), (right, " / ".join(self.scores))):
            axis.set_xlabel("epoch")
            axis.set_ylabel(name)
            axis.grid(alpha=0.3)
            if axis.lines:
                axis.legend(fontsize=8)
        fig.suptitle(self.title)
        fig.tight_layout()
        fig.savefig(self.path, dpi=100)
        plt.close(fig)
