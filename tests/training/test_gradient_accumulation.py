"""Gradient accumulation: N batches of B train exactly as one batch of N * B.

The reference is the same model fitted with the large batch and no
accumulation (`tests/accumulation_runs.py`; JAX and torch run it in
`tests/models/backend_checks.py`). Keras' own `gradient_accumulation_steps`
alone is not enough: its schedule is called with the count of batches, so
warmup and decay would run N times too fast; the test shows that gap too.
"""

import json

import numpy as np
import pytest
from accumulation_runs import accumulation_differences
from albert_test_case import micro_config

from albert_keras import AlbertBackbone
from albert_keras.config_checks import check_accumulation_steps
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask, FinetuningOptions
from albert_keras.tasks.training_schedule import update_count
from albert_keras.training.optimizers import create_optimizer
from albert_keras.training.warmup_polynomial_decay import WarmupPolynomialDecay


def test_accumulated_batches_train_as_one_large_batch():
    report = accumulation_differences()
    # 4 updates of 16 rows; 2 x 8 and 4 x 4 batches make the same 4.
    assert report["adamw"]["updates"] == [4, 4, 4], report
    assert report["lamb"]["updates"] == [4, 4], report
    assert report["adamw"]["2x8"] < 1e-6, report
    assert report["adamw"]["4x4"] < 1e-6, report
    assert report["lamb"]["2x8"] < 1e-6, report
    # Keras' accumulation with an undivided schedule: rates of batches.
    assert report["adamw"]["keras_schedule_2x8"] > 1e-4, report


def test_the_schedule_counts_updates():
    base = WarmupPolynomialDecay(1e-3, decay_steps=10, warmup_steps=3)
    every_third = WarmupPolynomialDecay(
        1e-3, decay_steps=10, warmup_steps=3, accumulation_steps=3
    )
    got = [float(every_third(step)) for step in range(40)]
    assert got == [float(base(step // 3)) for step in range(40)]
    again = WarmupPolynomialDecay.from_config(every_third.get_config())
    assert float(again(7)) == float(base(2))
    optimizer = create_optimizer("adamw", 1e-3, 10, 1, gradient_accumulation_steps=3)
    assert optimizer.gradient_accumulation_steps == 3
    assert create_optimizer("adamw").gradient_accumulation_steps is None


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2", None])
def test_bad_counts_are_refused_with_the_flag(bad):
    for make in (
        check_accumulation_steps,
        lambda n: FinetuningOptions(gradient_accumulation_steps=n),
        lambda n: create_optimizer("lamb", gradient_accumulation_steps=n),
    ):
        with pytest.raises(ValueError, match="--gradient-accumulation-steps"):
            make(bad)
    assert check_accumulation_steps(np.int64(3)) == 3


def test_a_run_with_fewer_batches_than_one_update_is_refused(capsys):
    options = FinetuningOptions(epochs=2, batch_size=8, gradient_accumulation_steps=4)
    assert update_count(64, options) == 4  # 16 batches
    assert "batch 32 in the memory of 8), 4 updates" in capsys.readouterr().out
    options.gradient_accumulation_steps = 17
    with pytest.raises(
        ValueError, match=r"more than the batches of the whole run \(16\).*at most 16"
    ):
        update_count(64, options)


def test_finetuning_accumulates_and_records_it(tmp_path, capsys):
    rows = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(40)]
    task = ClassificationTask(num_classes=2, sequence_length=16)
    backbone = AlbertBackbone(micro_config(8000))
    result = task.fit(
        backbone, rows, rows[:8], str(tmp_path / "run"), vocab=SPM_MODEL_PATH,
        epochs=1, batch_size=4, gradient_accumulation_steps=2, export=False,
    )  # fmt: skip
    assert result["epochs_run"] == 1
    # 10 batches, 5 updates; the rows of a resumed run must agree with it.
    assert "2 batches of 4 per update (batch 8 in the memory of 4), 5 updates" in (
        capsys.readouterr().out
    )
    assert int(task.model.optimizer.iterations) == 5
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["gradient_accumulation_steps"] == 2
