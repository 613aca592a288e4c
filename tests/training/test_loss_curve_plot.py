"""`LossCurvePlot`: points every few steps, a panel per loss, baselines, resume."""

import math
import os

import keras
import numpy as np
import pytest

from albert_keras.training.loss_curve_plot import LossCurvePlot, read_curve_points

# Per-step training values of a pretraining run (what one batch gives).
STEP_VALUES = {
    "loss": lambda s: 9.0 * math.exp(-s / 150) + 0.69,
    "mlm_loss": lambda s: 9.0 * math.exp(-s / 150),
    "sop_loss": lambda s: 0.69 + 0.01 * math.sin(s),
    "mlm_accuracy": lambda s: min(0.2, s / 2000),
    "sop_accuracy": lambda s: 0.5 + 0.1 * s / 400,
    "seq_per_sec": lambda s: 100.0,  # not drawn
}


def _drive(plot, epochs, steps, first_epoch=0, stop_after=None):
    """Calls the hooks as `fit` does, with Keras's running means in the logs."""
    plot.set_params({"epochs": epochs, "steps": steps, "verbose": 0})
    plot.on_train_begin()
    for epoch in range(first_epoch, epochs):
        plot.on_epoch_begin(epoch)
        sums = dict.fromkeys(STEP_VALUES, 0.0)
        for batch in range(steps):
            step = epoch * steps + batch + 1
            for name, value in STEP_VALUES.items():
                sums[name] += value(step)
            logs = {name: total / (batch + 1) for name, total in sums.items()}
            plot.on_train_batch_end(batch, logs)
            if step == stop_after:
                return  # killed
        held_out = {f"val_{k}": f(step) + 0.05 for k, f in STEP_VALUES.items()}
        plot.on_epoch_end(epoch, {**logs, **held_out})


def _lines(figure):
    """{line label: (axis, line)} of every drawn line."""
    return {
        line.get_label(): (axis, line)
        for axis in figure.axes
        for line in axis.get_lines()
    }


def _line(figure, start):
    (match,) = [v for k, v in _lines(figure).items() if k.startswith(start)]
    return match


def test_training_points_every_few_steps_held_out_points_per_epoch(tmp_path):
    plot = LossCurvePlot(str(tmp_path / "curves.png"))
    _drive(plot, epochs=4, steps=100)
    assert plot.every == 4  # 400 steps: about 100 points
    points = plot.step_points["mlm_loss"]
    assert len(points) == 100 > 4
    assert [p[0] for p in points[:3]] == [4, 8, 12]
    # Each point is the mean of its 4 steps, not Keras's running epoch mean.
    expected = np.mean([STEP_VALUES["mlm_loss"](s) for s in range(105, 109)])
    assert dict(map(tuple, points))[108] == pytest.approx(expected, rel=1e-9)
    assert "seq_per_sec" not in plot.step_points
    figure = plot.figure()
    _, train = _line(figure, "mlm_loss (mean of 4 steps)")
    _, held_out = _line(figure, "val_mlm_loss")
    assert len(train.get_xdata()) == 100
    assert list(held_out.get_xdata()) == [100, 200, 300, 400]


def test_each_loss_on_its_own_axis_scores_on_zero_to_one(tmp_path):
    baselines = {
        "sop_accuracy": ("chance", 0.5),
        "mlm_accuracy": ("unigram baseline", 0.065),
    }
    plot = LossCurvePlot(str(tmp_path / "curves.png"), baselines=baselines)
    _drive(plot, epochs=2, steps=50)
    figure = plot.figure()
    mlm_axis, _ = _line(figure, "mlm_loss")
    sop_axis, _ = _line(figure, "sop_loss")
    total_axis, _ = _line(figure, "loss")
    assert len({id(mlm_axis), id(sop_axis), id(total_axis)}) == 3
    assert mlm_axis.get_ylabel() == "mlm_loss" and sop_axis.get_ylabel() == "sop_loss"
    # The SOP loss is readable: its axis spans its own values, not 0-9.
    assert sop_axis.get_ylim()[1] - sop_axis.get_ylim()[0] < 0.1
    scores, _ = _line(figure, "sop_accuracy")
    assert _line(figure, "val_mlm_accuracy")[0] is scores
    assert scores.get_ylabel() == "mlm_accuracy, sop_accuracy"
    low, high = scores.get_ylim()
    assert low <= 0 and 1 <= high < 1.1
    for axis in figure.axes:
        assert axis.get_xlabel() == "training step"
    for label, value in (("chance 0.500", 0.5), ("unigram baseline 0.065", 0.065)):
        axis, line = _line(figure, label)
        assert axis is scores and line.get_linestyle() == "--"
        assert set(line.get_ydata()) == {value}


def test_a_redraw_inside_the_first_epoch(tmp_path):
    """Long first epochs are redrawn before any epoch has ended."""
    plot = LossCurvePlot(str(tmp_path / "curves.png"))
    _drive(plot, epochs=2, steps=100, stop_after=40)
    plot.draw()
    assert read_curve_points(str(tmp_path / "curves.png"))["steps"]["loss"]
    xs, _ = _line(plot.figure(), "loss")[1].get_data()
    assert max(xs) == 40


def test_a_finetuning_plot_names_its_score_once(tmp_path):
    plot = LossCurvePlot(
        str(tmp_path / "curves.png"),
        scores=("f1",),  # the task's monitor
        baselines={"accuracy": ("majority baseline", 0.52), "f1": 40.0},
    )
    plot.set_params({"epochs": 2, "steps": 10})
    plot.on_train_begin()
    for epoch in range(2):
        plot.on_epoch_begin(epoch)
        for batch in range(10):
            plot.on_train_batch_end(batch, {"loss": 0.7, "accuracy": 0.6})
        logs = {"loss": 0.7, "accuracy": 0.6, "val_accuracy": 0.55, "val_f1": 61.0}
        plot.on_epoch_end(epoch, logs)
    figure = plot.figure()
    axis, _ = _line(figure, "majority baseline 0.520")
    assert axis.get_ylabel() == "accuracy"
    # A percent score has its own axis, not squashing the fractions.
    f1_axis, _ = _line(figure, "val_f1")
    assert f1_axis is not axis and f1_axis.get_ylabel() == "f1"
    assert _line(figure, "f1 baseline 40.000")[0] is f1_axis
    assert plot.every == 1
    assert len(plot.step_points["loss"]) == 20


def test_the_png_holds_its_points_for_a_resume(tmp_path):
    """Killed in epoch 3 after a checkpoint at step 200: the resumed run keeps
    the points up to step 200 and redraws the rest once."""
    path = str(tmp_path / "curves.png")
    _drive(LossCurvePlot(path), epochs=4, steps=100, stop_after=250)
    stored = read_curve_points(path)
    assert stored["every"] == 4 and stored["epochs"] == {0: 100, 1: 200}
    assert stored["steps"]["mlm_loss"][-1][0] == 200  # drawn at epoch 1's end
    rows = [{"epoch": e, "mlm_loss": 1.0} for e in (0, 1)]
    resumed = LossCurvePlot(path, rows=rows)
    _drive(resumed, epochs=4, steps=100, first_epoch=2)
    steps = [p[0] for p in read_curve_points(path)["steps"]["mlm_loss"]]
    assert steps == list(range(4, 401, 4))
    # Without the PNG's points, the epochs before the resume are one point
    # each (their `history.csv` mean), at the step that ends them.
    os.remove(path)
    resumed = LossCurvePlot(path, rows=rows)
    _drive(resumed, epochs=4, steps=100, first_epoch=2)
    _, line = _line(resumed.figure(), "mlm_loss")
    assert list(line.get_xdata()[:3]) == [100, 200, 204]
    assert list(line.get_ydata()[:2]) == [1.0, 1.0]


def test_points_stay_few_when_the_run_length_is_unknown(tmp_path):
    plot = LossCurvePlot(str(tmp_path / "curves.png"))
    plot.set_params({"epochs": 1, "steps": None})
    plot.on_train_begin()
    plot.on_epoch_begin(0)
    for batch in range(1000):
        plot.on_train_batch_end(batch, {"loss": 1.0 / (batch + 1)})
    plot.on_epoch_end(0, {"loss": 0.001})
    points = plot.step_points["loss"]
    assert 50 <= len(points) <= 200 and plot.every == 8
    assert points[-1][0] == 1000


def test_a_real_fit_gives_each_step_its_own_loss(tmp_path):
    """Through `fit`: with a zero learning rate each batch's loss is known,
    and every point (every=1) is that batch's loss, also in a second `fit`
    that continues at epoch 1 (the step counted by the optimizer)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 3)).astype("float32")
    y = (x @ [1.0, -2.0, 0.5] + rng.normal(size=24)).astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    predictions = model.predict(x, verbose=0)[:, 0]
    per_batch = ((predictions - y) ** 2).reshape(6, 4).mean(axis=1)
    path = str(tmp_path / "curves.png")
    plot = LossCurvePlot(path, every=1)
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0, callbacks=[plot])
    plot = LossCurvePlot(path, every=1, rows=[{"epoch": 0, "loss": 9.0}])
    model.fit(
        x,
        y,
        batch_size=4,
        epochs=2,
        initial_epoch=1,
        shuffle=False,
        verbose=0,
        callbacks=[plot],
    )
    points = read_curve_points(path)["steps"]["loss"]
    assert [p[0] for p in points] == list(range(1, 13))
    expected = np.concatenate([per_batch, per_batch])
    np.testing.assert_allclose([p[1] for p in points], expected, rtol=1e-4)
