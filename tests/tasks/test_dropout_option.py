"""`--dropout` / `task.fit(dropout=...)`: the encoder's dropout while fine-tuning.

A v2 release (or an `albert-keras pretrain` run) has no dropout, a v1
release 0.1; transformers lets a user set `hidden_dropout_prob` when
fine-tuning, and so does this. The copy with other dropout must compute
exactly what the original does when not training (max abs diff 0), differ
when training, keep an int8 model int8, and the CLI prints and records the
rate only when it is given (older runs still resume).
"""

import json

import keras
import numpy as np
import pytest
from albert_test_case import micro_config, tiny_finetune

from albert_keras import AlbertBackbone
from albert_keras.models.weight_copy import with_dropout
from albert_keras.tasks.finetuning_options import FinetuningOptions

ROWS = [{"text": f"word {i} " * (1 + i % 5), "label": i % 2} for i in range(16)]
INPUTS = {
    "token_ids": np.arange(1, 25, dtype="int32").reshape(2, 12) % 50 + 5,
    "segment_ids": np.zeros((2, 12), "int32"),
    "padding_mask": np.ones((2, 12), "int32"),
}


def _backbone(rate=0.0):
    keras.utils.set_random_seed(1)
    config = micro_config(hidden_dropout_prob=rate, attention_probs_dropout_prob=rate)
    return AlbertBackbone(config)


def _max_diff(a, b, training=False):
    out_a = a(INPUTS, training=training)["sequence_output"]
    out_b = b(INPUTS, training=training)["sequence_output"]
    return float(np.max(np.abs(np.asarray(out_a) - np.asarray(out_b))))


def test_the_copy_drops_out_at_the_rate_and_infers_the_same():
    plain = _backbone()
    dropping = with_dropout(plain, 0.3)
    assert dropping is not plain
    assert dropping.config.hidden_dropout_prob == 0.3
    assert dropping.config.attention_probs_dropout_prob == 0.3
    assert plain.config.hidden_dropout_prob == 0.0  # the original is left alone
    assert _max_diff(plain, dropping) == 0.0
    # Training: the copy drops activations out, the original has none to drop.
    assert _max_diff(plain, dropping, training=True) > 1e-3
    assert _max_diff(plain, plain, training=True) == 0.0
    # Back to none: the same function again, in training too.
    assert _max_diff(plain, with_dropout(dropping, 0.0), training=True) == 0.0


def test_none_or_the_own_rate_keep_the_backbone():
    plain = _backbone(0.1)
    assert with_dropout(plain, None) is plain
    assert with_dropout(plain, 0.1) is plain


def test_an_int8_backbone_stays_int8_and_infers_the_same():
    plain = _backbone()
    plain.quantize("int8")
    dropping = with_dropout(plain, 0.1)
    modes = {layer.quantization_mode for layer in dropping._flatten_layers()}
    assert "int8" in modes
    assert _max_diff(plain, dropping) == 0.0


@pytest.mark.parametrize("bad", [1.0, -0.1, True, "0.1"])
def test_bad_rates_are_refused_with_the_flag(bad):
    with pytest.raises(ValueError, match="--dropout"):
        FinetuningOptions(dropout=bad)


def _cli(tmp_path, *flags):
    return tiny_finetune(tmp_path, ROWS, *flags)


def _settings(tmp_path):
    with open(tmp_path / "run" / "run_settings.json") as f:
        return json.load(f)


def test_the_cli_prints_and_records_the_rate(tmp_path, capsys):
    assert _cli(tmp_path, "--dropout", "0.2") == 0
    out = capsys.readouterr().out
    assert "Encoder dropout 0.2 (--dropout; the model's: 0)" in out
    assert _settings(tmp_path)["dropout"] == 0.2
    model = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert model.backbone.config.hidden_dropout_prob == 0.2


def test_left_out_it_is_neither_printed_nor_recorded(tmp_path, capsys):
    assert _cli(tmp_path) == 0
    assert "Encoder dropout" not in capsys.readouterr().out
    assert "dropout" not in _settings(tmp_path)
    # The same command again: the finished run is recognised, not refused.
    assert _cli(tmp_path) == 0
    assert "holds this run, finished" in capsys.readouterr().out


def test_the_cli_refuses_a_bad_rate_before_loading(tmp_path, capsys):
    assert _cli(tmp_path, "--dropout", "1.5") == 2
    err = capsys.readouterr().err
    assert "`dropout` (--dropout)" in err and "Traceback" not in err
    assert not (tmp_path / "run" / "best.keras").exists()
