"""`LossCurvePlot`: `curves.png`, the losses and scores against the training step."""

from __future__ import annotations

import bisect
import json
import math
import os
import time

import keras

from albert_keras.atomic_files import save_atomically
from albert_keras.training.optimizer_steps import (
    batches_per_update,
    optimizer_updates,
)

# The PNG text chunk that holds the plotted step points (`read_curve_points`).
POINTS_KEY = "albert_keras.curves"
# Points per training curve: `every` is chosen for about 100 over a run, and
# pairs of points are merged (`every` doubled) past 200, so a curve shows the
# trend without a point per step of a 100,000-step run.
_TARGET_POINTS = 100
_MAX_POINTS = 200
# Within a long epoch the picture is redrawn at most this often.
_REDRAW_SECONDS = 60.0


def read_curve_points(path: str) -> dict | None:
    """The step points a `LossCurvePlot` stored in its PNG; None if there are none.

    Returns: {"every": steps per point, "epochs": {epoch: its last step},
        "steps": {log name: [[step, value], ...]},
        "baselines": {log name: [label, value]}}.

    Example:
    >>> read_curve_points("runs/pretrain/curves.png")["steps"]["mlm_loss"][:2]
    ... # doctest: +SKIP
    [[4, 9.01], [8, 8.87]]
    """
    if not os.path.isfile(path):
        return None
    try:
        from PIL import Image

        with Image.open(path) as image:
            text = getattr(image, "text", {}).get(POINTS_KEY)
        data = json.loads(text) if text else None
    except (OSError, ValueError, SyntaxError):
        return None  # not a PNG of ours, or half of an old one
    if not isinstance(data, dict):
        return None
    return {
        "every": int(data.get("every") or 1),
        "epochs": {int(k): int(v) for k, v in data.get("epochs", {}).items()},
        "steps": {k: [list(p) for p in v] for k, v in data.get("steps", {}).items()},
        "baselines": dict(data.get("baselines", {})),
    }


class LossCurvePlot(keras.callbacks.Callback):
    """Draws the losses and scores of the logs against the training step.

    Each loss (`loss`, `mlm_loss`, `sop_loss`, ...) has its own panel, so
    losses of different scales (pretraining's MLM loss near 7, its SOP loss
    near 0.69) are each readable. Accuracies and the other `scores` share a
    panel whose axis spans 0 to 1 (a score beyond 1, such as SQuAD's F1 in
    percent, gets a panel of its own). Training values get a point every
    `every` steps: the mean over the steps since the previous point (Keras
    logs running means over the epoch; their differences are weighted by step,
    so a batch-size- or mask-weighted metric is approximate to that
    weighting). Held-out values (`val_*`) are drawn at the step that ends
    their epoch; baselines as dashed horizontal lines.

    Redrawn at each epoch end (and at most once a minute within an epoch)
    through a temporary file and a rename, so the picture is whole after a
    kill. The PNG also holds its step points (`read_curve_points`): a resumed
    run keeps those up to the step it resumes from; epochs in `rows` whose
    step points are lost (no PNG) are drawn as one point per epoch.

    Args:
        path: the PNG to write.
        title: the figure title.
        scores: log names plotted with the accuracies (any name ending with
            one), e.g. ("f1", "pearson").
        rows: `history.csv` rows (dicts with `epoch`) of the epochs before a
            resume.
        baselines: horizontal lines on a metric's panel, as
            {metric: value} or {metric: (label, value)}, e.g.
            {"accuracy": ("majority baseline", 0.52)}.
        every: training steps per point; default: chosen when `fit` starts,
            for about 100 points over the run (a 400-step run: every 4).

    Example:
    >>> plot = LossCurvePlot("/tmp/curves.png", baselines={"sop_accuracy": 0.5})
    """

    def __init__(
        self,
        path: str,
        title: str = "ALBERT training",
        scores=(),
        rows=(),
        *,
        baselines: dict | None = None,
        every: int | None = None,
    ):
        super().__init__()
        self.path = path
        self.title = title
        self.scores = ("accuracy", *scores)
        self.baselines = {k: _labelled(k, v) for k, v in (baselines or {}).items()}
        self.every = every
        self._auto_every = every is None
        self.epoch_logs: dict[int, dict[str, float]] = {}
        self.epoch_steps: dict[int, int] = {}  # epoch -> its last step
        self.step_points: dict[str, list[list[float]]] = {}
        for row in rows:  # the epochs before a resume (`history.csv` rows)
            self.epoch_logs[int(row["epoch"])] = {
                k: float(v) for k, v in row.items() if k != "epoch"
            }
        # Kept up to the step a resumed run starts from (`on_epoch_begin`).
        stored = read_curve_points(path)
        if stored:
            self.step_points = stored["steps"]
            self.epoch_steps = {
                e: s for e, s in stored["epochs"].items() if e in self.epoch_logs
            }
            if self.epoch_logs:  # a resume: the same interval as before
                self.every = self.every or stored["every"]
        self._epoch_start = self._step = self._last_point = 0
        self._since: tuple[int, dict] = (0, {})  # steps into the epoch, means
        self._drawn = time.monotonic()

    # === Keras hooks ===

    def on_train_begin(self, logs=None):
        if self._auto_every and self.every is None:
            params = self.params or {}
            epochs, steps = params.get("epochs"), params.get("steps")
            total = (
                epochs * steps // self._batches_per_step() if epochs and steps else 0
            )
            self.every = max(1, round(total / _TARGET_POINTS))

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self._step = self._last_point = self._start_step(epoch)
        self._since = (0, {})
        # A resumed run redoes what came after its checkpoint.
        self.epoch_logs = {e: v for e, v in self.epoch_logs.items() if e < epoch}
        self.epoch_steps = {e: s for e, s in self.epoch_steps.items() if e < epoch}
        self.step_points = {
            k: [p for p in v if p[0] <= self._epoch_start]
            for k, v in self.step_points.items()
        }

    def on_train_batch_end(self, batch, logs=None):
        self._step = self._epoch_start + (batch + 1) // self._batches_per_step()
        every = self.every or 1
        if self._step // every > self._last_point // every:
            self._record(logs)
            if time.monotonic() - self._drawn > _REDRAW_SECONDS:
                self.draw()

    def on_epoch_end(self, epoch, logs=None):
        if self._step > self._last_point:  # the steps after the last point
            self._record(logs)
        self.epoch_logs[epoch] = {
            k: float(v) for k, v in (logs or {}).items() if _is_number(v)
        }
        if self._step > self._epoch_start:
            self.epoch_steps[epoch] = self._step
        self._thin()
        self.draw()

    def _start_step(self, epoch) -> int:
        """The optimizer's step count (right after a resume too), else counted."""
        try:
            return optimizer_updates(self.model.optimizer)
        except (AttributeError, TypeError, ValueError):
            pass
        steps = (self.params or {}).get("steps")
        return epoch * steps // self._batches_per_step() if steps else self._step

    def _batches_per_step(self) -> int:
        """Batches per training step: 1, or N under gradient accumulation
        (the curves are drawn against updates, as the step is counted)."""
        return batches_per_update(getattr(self.model, "optimizer", None))

    def _record(self, logs):
        """A point per training metric: its mean since the previous point."""
        count = self._step - self._epoch_start
        done, means = self._since
        current = {}
        for key, value in (logs or {}).items():
            if key.startswith("val_") or not self._panel(key) or not _is_number(value):
                continue
            current[key] = value = float(value)
            if done and key in means:
                value = (value * count - means[key] * done) / (count - done)
            self.step_points.setdefault(key, []).append([self._step, value])
        self._since = (count, current)
        self._last_point = self._step

    def _thin(self):
        """Merges pairs of points (step-weighted) while a curve has too many."""
        if not self._auto_every:
            return
        while max(map(len, self.step_points.values()), default=0) > _MAX_POINTS:
            self.step_points = {k: _merged(v) for k, v in self.step_points.items()}
            self.every = (self.every or 1) * 2

    # === Drawing ===

    def draw(self):
        """Writes the PNG (with its step points) through a temporary file."""
        figure = self.figure()
        data = json.dumps(
            {
                "every": self.every or 1,
                "epochs": {str(e): s for e, s in self.epoch_steps.items()},
                "steps": self.step_points,
                "baselines": self.baselines,
            }
        )
        save_atomically(
            self.path,
            lambda path: figure.savefig(
                path, dpi=100, format="png", metadata={POINTS_KEY: data}
            ),
        )
        self._drawn = time.monotonic()

    def figure(self):
        """The `matplotlib.figure.Figure` that `draw` saves (no pyplot state)."""
        from matplotlib.figure import Figure

        curves, unit = self._curves()
        panels = self._panels(curves)
        columns = 1 if len(panels) < 2 else 2
        rows = max(1, math.ceil(len(panels) / columns))
        figure = Figure(figsize=(5.5 * columns, 3.4 * rows + 0.6))
        axes = list(figure.subplots(rows, columns, squeeze=False).flat)
        for axis, (panel, names) in zip(axes, panels.items(), strict=False):
            self._draw_panel(axis, panel, names, curves, unit)
        for axis in axes[len(panels) :]:
            axis.set_visible(False)
        figure.suptitle(self.title)
        figure.tight_layout()
        return figure

    def _curves(self) -> tuple[dict, str]:
        """{log name: (xs, ys)} and the x unit ("training step" or "epoch")."""
        epochs = sorted(self.epoch_logs)
        ends = {e: self._epoch_end_step(e) for e in epochs}
        unit = "training step"
        if any(s is None for s in ends.values()):
            unit, ends = "epoch", {e: e + 1 for e in epochs}
        curves = {}
        names = {k for e in epochs for k in self.epoch_logs[e]} | set(self.step_points)
        for name in sorted(names):
            if not self._panel(name):
                continue
            steps = [] if unit == "epoch" else self.step_points.get(name, [])
            xs, ys = [p[0] for p in steps], [p[1] for p in steps]
            starts = [0, *(ends[e] for e in epochs[:-1])][: len(epochs)]
            for epoch, start in zip(epochs, starts, strict=True):
                value = self.epoch_logs[epoch].get(name)
                if value is None or _has_point_in(xs, start, ends[epoch]):
                    continue
                index = bisect.bisect(xs, ends[epoch])
                xs.insert(index, ends[epoch])
                ys.insert(index, value)
            if xs:
                curves[name] = (xs, ys)
        return curves, unit

    def _epoch_end_step(self, epoch) -> int | None:
        if epoch in self.epoch_steps:
            return self.epoch_steps[epoch]
        steps = (self.params or {}).get("steps")
        return (epoch + 1) * steps if steps else None

    def _panel(self, name) -> str | None:
        """The panel of a log name: its loss, "scores", or None (not drawn)."""
        base = name[4:] if name.startswith("val_") else name
        if base.endswith("loss"):
            return base
        if base.endswith(self.scores):
            return "scores"
        return None

    def _panels(self, curves) -> dict[str, list[str]]:
        """Panel -> names: losses first (`loss` leading), scores last; a
        score beyond [-1, 1] (percent) on its own panel."""
        panels: dict[str, list[str]] = {}
        for name in [*curves, *self.baselines]:
            panel = self._panel(name)
            values = curves.get(name, ([], []))[1]
            if name in self.baselines:
                values = [*values, self.baselines[name][1]]
            if panel == "scores" and any(abs(v) > 1 for v in values if _finite(v)):
                panel = _base(name)
            if panel and name not in panels.setdefault(panel, []):
                panels[panel].append(name)

        def order(panel):
            return (panel == "scores", panel != "loss", not panel.endswith("loss"))

        return {p: panels[p] for p in sorted(panels, key=lambda p: (order(p), p))}

    def _draw_panel(self, axis, panel, names, curves, unit):
        from matplotlib.ticker import MaxNLocator

        bases = sorted({_base(n) for n in names})
        colors = {base: f"C{i}" for i, base in enumerate(bases)}
        values = []
        for name in names:
            if name not in curves:
                continue
            xs, ys = curves[name]
            values += ys
            held_out = name.startswith("val_")
            label = f"{name} (held-out)" if held_out else name
            if not held_out and unit != "epoch" and (self.every or 1) > 1:
                label += f" (mean of {self.every} steps)"
            axis.plot(
                xs,
                ys,
                "o:" if held_out else "-",
                color=colors[_base(name)],
                markersize=4,
                linewidth=1.5 if held_out else 1.0,
                label=label,
            )
        for name in names:
            if name in self.baselines:
                label, value = self.baselines[name]
                values.append(value)
                axis.axhline(
                    value,
                    linestyle="--",
                    linewidth=1.0,
                    color=colors[_base(name)],
                    label=f"{label} {value:.3f}",
                )
        finite = [v for v in values if _finite(v)]
        if panel == "scores" and finite:  # fractions: the whole 0-1 range
            axis.set_ylim(min(0.0, min(finite)) - 0.02, max(1.0, max(finite)) + 0.02)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_xlabel(unit)
        axis.set_ylabel(", ".join(bases))
        axis.grid(alpha=0.3)
        if axis.lines:
            axis.legend(fontsize=8)


def _labelled(name, baseline) -> tuple[str, float]:
    """(label, value) of a `baselines` entry: a number or (label, number)."""
    if isinstance(baseline, (tuple, list)):
        label, value = baseline
        return str(label), float(value)
    return f"{_base(name)} baseline", float(baseline)


def _base(name: str) -> str:
    return name[4:] if name.startswith("val_") else name


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _finite(value) -> bool:
    return math.isfinite(value)


def _has_point_in(xs, start, end) -> bool:
    """Whether sorted `xs` has a value in (start, end]."""
    index = bisect.bisect_right(xs, start)
    return index < len(xs) and xs[index] <= end


def _merged(points):
    """Pairs of consecutive (step, mean) points as one, weighted by their steps."""
    merged, previous = [], 0
    for i in range(0, len(points) - 1, 2):
        (a, va), (b, vb) = points[i], points[i + 1]
        wa, wb = a - previous, b - a
        value = (va * wa + vb * wb) / (wa + wb) if wa + wb > 0 else vb
        merged.append([b, value])
        previous = b
    if len(points) % 2:
        merged.append(points[-1])
    return merged
