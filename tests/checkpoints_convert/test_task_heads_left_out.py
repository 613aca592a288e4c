"""Converting a fine-tuned checkpoint as the default pretrainer says how to
keep its head.

`albert-convert hf_classifier/ --output x.keras` built a pretrainer (random
MLM and SOP heads) and reported "skipped 2 head variables the model has no
head for: root output_weights/output_bias": an official name a transformers
or keras-hub user does not know, and no word of `--model`.
"""

import os

from albert_keras import AlbertBackbone, AlbertConfig, AlbertMultipleChoice
from albert_keras.models import AlbertSpanQA
from checkpoints_convert import save_hf_checkpoint
from checkpoints_convert.cli import main as convert_main

TINY = {"vocab_size": 100, "embedding_size": 8, "hidden_size": 16}
TINY.update(num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)


def _converted_err(model, tmp_path, capsys, *flags):
    folder = str(tmp_path / "hf")
    save_hf_checkpoint(model, folder)
    output = str(tmp_path / "out.keras")
    assert convert_main([folder, "--output", output, *flags]) == 0
    assert os.path.isfile(output)
    return capsys.readouterr().err


def test_a_choice_head_left_out_names_the_models_that_keep_it(tmp_path, capsys):
    model = AlbertMultipleChoice(AlbertBackbone(AlbertConfig(**TINY)))
    err = _converted_err(model, tmp_path, capsys)
    assert "build --model classifier or multiple_choice to keep it" in err, err
    err = _converted_err(model, tmp_path, capsys, "--model", "multiple_choice")
    assert "to keep it" not in err, err


def test_a_span_head_left_out_names_span_qa(tmp_path, capsys):
    model = AlbertSpanQA(AlbertBackbone(AlbertConfig(**TINY)))
    err = _converted_err(model, tmp_path, capsys, "--model", "backbone")
    assert "build --model span_qa to keep it" in err, err
