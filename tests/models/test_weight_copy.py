"""copy_weights and with_positions: a model pretrained with few positions goes on
(continued pretraining, fine-tuning) with a longer position table."""

import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs
from numpy_ops import randomize

from albert_keras import AlbertBackbone, AlbertPretrainer
from albert_keras.models import AlbertSquadV2
from albert_keras.models.weight_copy import (
    copy_weights,
    reuse_task_head,
    with_positions,
)


def pretrainer(positions, seed=None, **changes):
    model = AlbertPretrainer(
        AlbertBackbone(micro_config(max_position_embeddings=positions, **changes))
    )
    if seed is not None:
        randomize(model, seed=seed)
    return model


def mlm_inputs(length, seed=0):
    x = random_inputs(batch=3, length=length, vocab=60, seed=seed)
    x["mask_positions"] = np.tile(np.arange(1, 5, dtype="int32"), (3, 1))
    return x


def test_a_longer_table_gets_the_rows_tiled_and_the_same_outputs():
    short, long = pretrainer(16, seed=3), pretrainer(40, seed=4)
    assert copy_weights(short, long) == 16
    table = short.backbone.embeddings.position_embeddings.numpy()
    longer = long.backbone.embeddings.position_embeddings.numpy()
    assert longer.shape == (40, 8)
    # Rows 16-31 and 32-39 repeat rows 0-15 and 0-7.
    expected = np.concatenate([table, table, table[:8]])
    assert max_abs_diff(longer, expected) == 0.0
    # Every other variable is the source's, so on 16 tokens both models agree.
    x = mlm_inputs(16)
    a, b = short(x), long(x)
    for name in ("mlm_logits", "sop_logits"):
        assert max_abs_diff(a[name], b[name]) < 1e-6, name
    # And the extra positions are used: 24 tokens run in the longer model only.
    assert long(mlm_inputs(24))["mlm_logits"].shape == (3, 4, 60)


def test_same_shapes_copy_everything():
    source, target = pretrainer(16, seed=5), pretrainer(16, seed=6)
    assert copy_weights(source, target) == 0
    for s, t in zip(source.weights, target.weights, strict=True):
        assert max_abs_diff(s, t) == 0.0, t.path


def test_other_shapes_name_the_variable_and_assign_nothing():
    source, target = pretrainer(16, seed=7), pretrainer(16, seed=8, vocab_size=70)
    before = [w.numpy().copy() for w in target.weights]
    with pytest.raises(ValueError, match=r"word_embeddings \(60, 8\).*\(70, 8\)"):
        copy_weights(source, target)
    for old, w in zip(before, target.weights, strict=True):
        assert max_abs_diff(old, w) == 0.0, w.path
    # A shorter table is not filled from a longer one either.
    with pytest.raises(ValueError, match=r"position_embeddings \(40, 8\)"):
        copy_weights(pretrainer(40), pretrainer(16))


def test_other_architectures_are_refused():
    with pytest.raises(ValueError, match="not the same architecture"):
        copy_weights(
            pretrainer(16), pretrainer(16, num_hidden_layers=2, sharing="none")
        )


def test_with_positions_extends_only_when_needed():
    backbone = AlbertBackbone(micro_config(max_position_embeddings=16))
    randomize(backbone, seed=9)
    assert with_positions(backbone, 16) is backbone
    longer = with_positions(backbone, 24)
    assert longer.config.max_position_embeddings == 24
    x = random_inputs(batch=2, length=16, vocab=60)
    a, b = backbone(x), longer(x)
    assert max_abs_diff(a["sequence_output"], b["sequence_output"]) < 1e-6
    assert max_abs_diff(a["pooled_output"], b["pooled_output"]) < 1e-6


def test_a_warmed_up_head_is_reused_on_longer_sequences():
    warmed = AlbertSquadV2(AlbertBackbone(micro_config(max_position_embeddings=16)))
    randomize(warmed, seed=10)
    backbone = with_positions(warmed.backbone, 24)
    model = AlbertSquadV2(backbone)
    assert "head included" in reuse_task_head(model, warmed)
    ours = {id(w) for w in model.backbone.weights}
    theirs = {id(w) for w in warmed.backbone.weights}
    head = [w for w in model.weights if id(w) not in ours]
    warmed_head = [w for w in warmed.weights if id(w) not in theirs]
    assert len(head) == len(warmed_head) > 0
    for w, v in zip(head, warmed_head, strict=True):
        assert max_abs_diff(w, v) == 0.0, w.path
    x = random_inputs(batch=2, length=16, vocab=60)
    x["p_mask"] = np.zeros((2, 16), "int32")
    x["start_positions"] = np.array([3, 5], "int32")
    first, second = warmed.predict(x, verbose=0), model.predict(x, verbose=0)
    for name, value in first.items():
        assert max_abs_diff(value, second[name]) < 1e-5, name
