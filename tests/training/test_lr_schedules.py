"""`--lr-schedule linear|cosine|constant` (transformers' `lr_scheduler_type`).

Before, fine-tuning always decayed linearly to 0 (the official schedule).
The references: the formulas written out in Python floats, and
transformers' own schedulers where they are installed (as in CI).
"""

import importlib.util
import math

import keras
import numpy as np
import pytest
from albert_test_case import micro_config

from albert_keras import AlbertBackbone
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_options import FinetuningOptions
from albert_keras.training.optimizers import create_optimizer

PEAK, STEPS, WARMUP = 1e-3, 40, 6


def _expected(name, step):
    if step < WARMUP:
        return PEAK * step / WARMUP
    if name == "constant":
        return PEAK
    if name == "linear":  # the official decay, counted from step 0
        return PEAK * (1 - min(step, STEPS) / STEPS)
    done = min((step - WARMUP) / (STEPS - WARMUP), 1.0)
    return PEAK * 0.5 * (1 + math.cos(math.pi * done))


def _rates(name, accumulation=1, steps=range(STEPS + 5)):
    optimizer = create_optimizer(
        "adamw", PEAK, STEPS, WARMUP, lr_schedule=name,
        gradient_accumulation_steps=accumulation,
    )  # fmt: skip
    # What `fit` calls with the step, read through the public config.
    config = optimizer.get_config()["learning_rate"]
    schedule = keras.optimizers.schedules.deserialize(config)
    return np.array([float(schedule(s)) for s in steps])


@pytest.mark.parametrize("name", ["linear", "cosine", "constant"])
def test_the_schedules_follow_their_formulas(name):
    expected = np.array([_expected(name, s) for s in range(STEPS + 5)])
    np.testing.assert_allclose(_rates(name), expected, atol=1e-9)
    # Under accumulation the steps are updates: batch 4k+3 is update k.
    batches = [4 * s + 3 for s in range(STEPS + 5)]
    np.testing.assert_allclose(
        _rates(name, 4, batches), expected, atol=1e-9
    )  # fmt: skip


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None
    or importlib.util.find_spec("torch") is None,
    reason="transformers and torch (CI installs them) give the third reference",
)
def test_cosine_and_constant_match_transformers():
    import torch
    from transformers import get_scheduler

    for name, theirs in (("cosine", "cosine"), ("constant", "constant_with_warmup")):
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=PEAK)
        scheduler = get_scheduler(theirs, optimizer, WARMUP, STEPS)
        rates = []
        for _ in range(STEPS):
            rates.append(scheduler.get_last_lr()[0])
            optimizer.step()
            scheduler.step()
        np.testing.assert_allclose(_rates(name, steps=range(STEPS)), rates, atol=1e-9)


def test_the_schedule_reaches_the_run_and_its_saved_model(tmp_path):
    rows = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]
    task = ClassificationTask(num_classes=2, sequence_length=16)
    task.fit(
        AlbertBackbone(micro_config(8000)), rows, rows[:8], str(tmp_path / "run"),
        vocab=SPM_MODEL_PATH, epochs=1, batch_size=8, export=False,
        jit_compile=False, verbose=0, lr_schedule="cosine",
    )  # fmt: skip
    loaded = keras.saving.load_model(str(tmp_path / "run" / "best.keras"))
    config = loaded.optimizer.get_config()["learning_rate"]
    assert config["class_name"] == "WarmupCosineDecay", config
    with pytest.raises(ValueError, match=r"--lr-schedule\) must be linear, cosine"):
        FinetuningOptions(lr_schedule="cosine_with_restarts")
