"""`save_lora_weights` / `load_lora_weights`: the adapters alone, as keras-hub
users share them, back onto the base weights with the same outputs."""

import os

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff

from albert_keras.models.albert_backbone import AlbertBackbone

TARGETS = ["query", "value", "intermediate"]


def _inputs():
    ids = np.arange(2, 18, dtype="int32").reshape(2, 8)
    return {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": 1 + 0 * ids}


def _trained_adapters(rank=2):
    """A backbone with LoRA whose adapters moved (B starts at zero), and its
    base weights from before."""
    keras.utils.set_random_seed(5)
    backbone = AlbertBackbone("albert_tiny")
    base = backbone.get_weights()
    backbone.enable_lora(rank, target_layer_names=TARGETS)
    rng = np.random.default_rng(0)
    for variable in backbone.trainable_weights:
        variable.assign(rng.normal(0, 0.1, variable.shape).astype("float32"))
    return backbone, base


def test_adapters_saved_alone_give_the_same_outputs_on_the_base(tmp_path):
    backbone, base = _trained_adapters()
    x = _inputs()
    want = backbone(x)["sequence_output"]
    path = str(tmp_path / "rt.lora.h5")
    assert backbone.save_lora_weights(path) == path
    assert os.path.getsize(path) < 20_000  # the adapters, not the model
    assert [n for n in os.listdir(tmp_path)] == ["rt.lora.h5"]  # no temporary

    clone = AlbertBackbone("albert_tiny")
    clone.set_weights(base)
    assert max_abs_diff(clone(x)["sequence_output"], want) > 1e-3
    clone.load_lora_weights(path)  # LoRA enabled at the file's rank and layers
    assert max_abs_diff(clone(x)["sequence_output"], want) == 0.0
    adapted = {w.path.rsplit("/", 2)[-2] for w in clone.trainable_weights}
    assert adapted == set(TARGETS)


def test_lora_weights_misuse_is_named(tmp_path):
    backbone, _ = _trained_adapters()
    path = str(tmp_path / "a.lora.h5")
    backbone.save_lora_weights(path)
    with pytest.raises(ValueError, match=r"ends in '\.lora\.h5'"):
        backbone.save_lora_weights(str(tmp_path / "a.h5"))
    with pytest.raises(ValueError, match="no LoRA adapters to save: call `enable_lora"):
        AlbertBackbone("albert_tiny").save_lora_weights(path)
    with pytest.raises(FileNotFoundError, match="No LoRA weights file"):
        backbone.load_lora_weights(str(tmp_path / "none.lora.h5"))
    other_rank = AlbertBackbone("albert_tiny")
    other_rank.enable_lora(4)
    with pytest.raises(ValueError, match="holds rank-2 adapters, and this backbone"):
        other_rank.load_lora_weights(path)
    with pytest.raises(ValueError, match="do not fit this backbone: missing none"):
        AlbertBackbone("albert_small").load_lora_weights(path)
