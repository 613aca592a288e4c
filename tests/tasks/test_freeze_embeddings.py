"""`--freeze-embeddings` / `AlbertBackbone.freeze_embeddings()`: the embedding
tables and their LayerNorm keep their values while the rest fine-tunes.

transformers users freeze `model.albert.embeddings` (`requires_grad_(False)`);
here a run must leave exactly those variables unchanged (max abs diff 0.0)
and move the projection and the encoder, print and record the option.
"""

import json

import keras
import numpy as np
from albert_test_case import micro_config, tiny_finetune

from albert_keras import AlbertBackbone, AlbertClassifier
from albert_keras.sample_text import SPM_MODEL_PATH

ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]
FROZEN = ("word_embeddings", "token_type_embeddings", "position_embeddings")


def _tables(backbone):
    """{name: array} of the embedding layer's variables (tables, LayerNorm,
    projection)."""
    return {w.path: np.array(w.numpy()) for w in backbone.embeddings.weights}


def _moved(before, after):
    return {name: float(np.abs(before[name] - after[name]).max()) for name in before}


def test_a_fit_step_moves_all_but_the_frozen_variables():
    keras.utils.set_random_seed(0)
    backbone = AlbertBackbone(micro_config())
    frozen = backbone.freeze_embeddings()
    assert frozen == (60 + 16 + 2 + 2) * 8
    trainable = {w.path for w in backbone.trainable_weights}
    assert not any(name.endswith(FROZEN) for name in trainable)
    model = AlbertClassifier(backbone, num_classes=2)
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    ids = np.arange(32, dtype="int32").reshape(4, 8) % 50 + 5
    x = {
        "token_ids": ids,
        "segment_ids": np.zeros_like(ids),
        "padding_mask": np.ones_like(ids),
    }
    before = _tables(backbone)
    encoder = [np.array(w.numpy()) for w in backbone.encoder.weights]
    model.fit(x, {"logits": np.array([0, 1, 0, 1])}, epochs=2, verbose=0)
    moved = _moved(before, _tables(backbone))
    for name, diff in moved.items():
        if "projection" in name:
            assert diff > 0, name
        else:  # the three tables and the LayerNorm's gamma and beta
            assert diff == 0.0, (name, diff)
    assert len([n for n in moved if "projection" not in n]) == 5
    assert any(
        np.abs(a - w.numpy()).max() > 0
        for a, w in zip(encoder, backbone.encoder.weights, strict=True)
    )


def test_the_cli_keeps_the_init_tables_and_records_it(tmp_path, capsys):
    keras.utils.set_random_seed(3)
    init = AlbertBackbone(micro_config(8000))
    init.save(tmp_path / "init.keras")
    flags = ["--freeze-embeddings", "--init", str(tmp_path / "init.keras")]
    flags += ["--vocab", SPM_MODEL_PATH]
    assert tiny_finetune(tmp_path, ROWS, *flags, "--learning-rate", "0.01") == 0
    assert "Embeddings frozen: 64,160 parameters" in capsys.readouterr().out
    with open(tmp_path / "run" / "run_settings.json") as f:
        assert json.load(f)["freeze_embeddings"] is True
    best = keras.saving.load_model(tmp_path / "run" / "best.keras").backbone
    moved = _moved(_tables(init), _tables(best))
    assert max(d for n, d in moved.items() if "projection" not in n) == 0.0
    assert max(d for n, d in moved.items() if "projection" in n) > 0
