"""`--gradient-checkpointing` / `task.fit(gradient_checkpointing=True)`.

Fine-tuning a large model on long sequences runs out of memory before
pretraining's option could help: the blocks are now recomputed in the
backward pass when fine-tuning too. Checked: the blocks really go through
Keras' remat, the run trains to the same numbers as without it (the loss
and every weight), and a run may be resumed with it switched (it changes
no number, so it is not part of the settings a resumed run must share).
"""

import json

import keras
import numpy as np
from albert_test_case import max_abs_diff, micro_config, remat_spy, tiny_finetune

from albert_keras import AlbertBackbone
from albert_keras.models.weight_copy import with_gradient_checkpointing
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask

DROPOUT = {"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]


def _fit(folder, **options):
    keras.utils.set_random_seed(0)
    # With dropout: the copy must also draw the same masks.
    backbone = AlbertBackbone(micro_config(8000, **DROPOUT))
    task = ClassificationTask(num_classes=2, sequence_length=16)
    result = task.fit(
        backbone, ROWS, ROWS[:8], str(folder), vocab=SPM_MODEL_PATH,
        epochs=1, batch_size=8, export=False, **options,
    )  # fmt: skip
    return result["epochs"]["loss"][0], task.model.get_weights()


def test_the_copy_has_the_weights_and_infers_the_same():
    plain = AlbertBackbone(micro_config(100))
    copy = with_gradient_checkpointing(plain)
    assert copy is not plain and copy.config == plain.config
    inputs = {
        "token_ids": np.arange(5, 29, dtype="int32").reshape(2, 12),
        "segment_ids": np.zeros((2, 12), "int32"),
        "padding_mask": np.ones((2, 12), "int32"),
    }
    ours, theirs = copy(inputs), plain(inputs)
    assert max_abs_diff(ours["pooled_output"], theirs["pooled_output"]) == 0.0


def test_fine_tuning_recomputes_the_blocks_and_trains_the_same(
    tmp_path, monkeypatch, capsys
):
    recomputed = remat_spy(monkeypatch)
    plain_loss, plain = _fit(tmp_path / "plain")
    assert recomputed == []
    remat_loss, remat = _fit(tmp_path / "remat", gradient_checkpointing=True)
    assert "Gradient checkpointing: each block" in capsys.readouterr().out
    # micro_config's 2 layers, in each traced step function.
    assert len(recomputed) >= 2 and len(recomputed) % 2 == 0, recomputed
    assert abs(plain_loss - remat_loss) < 1e-6
    assert max(max_abs_diff(a, b) for a, b in zip(plain, remat, strict=True)) < 1e-5


def _cli(tmp_path, *flags):
    return tiny_finetune(tmp_path, ROWS, *flags)


def test_a_run_resumes_with_it_switched(tmp_path, capsys):
    assert _cli(tmp_path) == 0
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert "gradient_checkpointing" not in json.load(f)
    capsys.readouterr()
    # The same run with it on: recognised as this run, not refused as changed.
    assert _cli(tmp_path, "--gradient-checkpointing") == 0
    assert "holds this run, finished" in capsys.readouterr().out
