"""`--weight-decay`, `--max-grad-norm` and `--adam-epsilon` (transformers'
Trainer options).

Before, fine-tuning always ran with the official weight decay 0.01 and
global-norm clipping 1.0: neither could be changed from the CLI or from
`task.fit`. They reach the optimizer, are recorded only when not the
official values (older runs still resume), and bad values are refused with
the flag's name before any model loads.
"""

import json

import pytest
from albert_test_case import micro_config

from albert_keras import AlbertBackbone
from albert_keras.cli import main
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_options import FinetuningOptions

ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]


def _fit(folder, **options):
    task = ClassificationTask(num_classes=2, sequence_length=16)
    task.fit(
        AlbertBackbone(micro_config(8000)), ROWS, ROWS[:8], str(folder),
        vocab=SPM_MODEL_PATH, epochs=1, batch_size=8, export=False, **options,
    )  # fmt: skip
    with open(folder / "run_settings.json") as f:
        return task.model.optimizer, json.load(f)


def test_the_options_reach_the_optimizer_and_the_settings(tmp_path):
    optimizer, settings = _fit(tmp_path / "a", weight_decay=0.0, max_grad_norm=0)
    assert optimizer.weight_decay == 0.0 and optimizer.global_clipnorm is None
    assert settings["weight_decay"] == 0.0 and settings["max_grad_norm"] == 0
    assert optimizer.epsilon == 1e-6 and "adam_epsilon" not in settings
    optimizer, settings = _fit(tmp_path / "b", max_grad_norm=0.5, adam_epsilon=1e-8)
    assert optimizer.weight_decay == 0.01 and optimizer.global_clipnorm == 0.5
    assert optimizer.epsilon == 1e-8 and settings["adam_epsilon"] == 1e-8
    # The official values are what runs before the options did: unrecorded.
    assert "weight_decay" not in settings and settings["max_grad_norm"] == 0.5


@pytest.mark.parametrize(
    "bad",
    [
        {"weight_decay": -0.1},
        {"weight_decay": "0.01"},
        {"max_grad_norm": -1},
        {"adam_epsilon": 0},
    ],
)
def test_bad_values_are_refused_with_the_flag(bad):
    flag = "--" + next(iter(bad)).replace("_", "-")
    with pytest.raises(ValueError, match=flag):
        FinetuningOptions(**bad)


def test_the_cli_refuses_before_loading_a_model(tmp_path, capsys):
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    args = ["finetune", "--task", "classify", "--train", str(train)]
    args += ["--dev", str(train), "--output-dir", str(tmp_path / "run")]
    assert main(args + ["--max-grad-norm", "-2"]) == 2
    err = capsys.readouterr().err
    assert "`max_grad_norm` (--max-grad-norm)" in err and "Traceback" not in err
    assert main(args + ["--adam-epsilon", "0"]) == 2
    assert "`adam_epsilon` (--adam-epsilon)" in capsys.readouterr().err
