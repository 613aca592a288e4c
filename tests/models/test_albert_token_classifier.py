"""AlbertTokenClassifier: the per-token head's numbers, fit with masked tokens,
save/load, and the official-layout and transformers conversions."""

import json

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs, run_model_test
from numpy_ops import f64, randomize

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertTokenClassifier
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from checkpoints_convert import (
    ConversionError,
    load_official_checkpoint,
    save_hf_checkpoint,
    save_official_checkpoint,
)

CONFIG = micro_config(vocab_size=60)


def tagger(num_classes=4, seed=2):
    model = AlbertTokenClassifier(AlbertBackbone(CONFIG), num_classes=num_classes)
    randomize(model, seed=seed)
    return model


def test_head_numbers_and_fit_with_masked_tokens():
    model = tagger()
    x = random_inputs(batch=4, length=8, vocab=60)
    sequence = np.asarray(model.backbone(x)["sequence_output"], "float64")
    head = model.token_classifier
    expected = sequence @ f64(head.kernel) + f64(head.bias)
    logits = model(x)["logits"]
    assert tuple(logits.shape) == (4, 8, 4)
    assert max_abs_diff(logits, expected) < 1e-5
    # One tag per token; padding weighs nothing (as a word's later pieces).
    tags = (x["token_ids"] % 4).astype("int32")
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    run_model_test(model, x, tags, loss=loss)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss)
    weights = x["padding_mask"].astype("float32")
    history = model.fit(x, tags, sample_weight=weights, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_bad_num_classes_and_tag_names():
    with pytest.raises(ValueError, match="num_classes=0"):
        AlbertTokenClassifier(AlbertBackbone(CONFIG), num_classes=0)
    big = AlbertTokenClassifier(AlbertBackbone(micro_config(vocab_size=8000)), 3)
    with pytest.raises(ValueError, match="`tags` names 2 tags but the model has"):
        with_tokenizer(big, SPM_MODEL_PATH, 16, tags=["O", "B-X"])


def test_official_layout_round_trip_is_bit_exact(tmp_path):
    model = tagger(num_classes=5)
    prefix = save_official_checkpoint(model, str(tmp_path / "ckpt" / "model.ckpt"))
    again = load_official_checkpoint(prefix, model="token_classifier")
    assert again.num_classes == 5  # from token_classifier/output_weights
    for a, b in zip(model.weights, again.weights, strict=True):
        assert max_abs_diff(a, b) == 0.0, a.path
    # A sentence classifier never takes the per-token head, nor the reverse.
    with pytest.raises(ConversionError, match="no classifier head.*'token_classifier'"):
        load_official_checkpoint(prefix, model="classifier")
    sentence = load_official_checkpoint(prefix, model="classifier", num_classes=5)
    report = sentence.conversion_report
    assert report.new_heads == ("classifier",)
    assert "token_classifier/output_weights" in report.skipped_heads


def test_a_classifier_subclass_takes_num_classes_from_the_checkpoint(tmp_path):
    class MyClassifier(AlbertClassifier):
        pass

    model = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=3)
    prefix = save_official_checkpoint(model, str(tmp_path / "c" / "model.ckpt"))
    assert load_official_checkpoint(prefix, model=MyClassifier).num_classes == 3


def test_tag_names_of_a_transformers_folder_are_kept(tmp_path, capsys):
    """Converted, a transformers tagger keeps its id2label as the tag set of
    a tagging run's settings (which `predict` and `--init` read)."""
    from albert_keras.tasks import Task
    from checkpoints_convert.backbone_loader import load_init_model, run_labels
    from checkpoints_convert.cli import main

    save_hf_checkpoint(tagger(3), tmp_path / "hf", labels=["O", "B-X", "I-X"])
    out = str(tmp_path / "tagger.keras")
    assert (
        main([str(tmp_path / "hf"), "--model", "token_classifier", "--output", out])
        == 0
    )
    err = capsys.readouterr().err
    assert "labels O, B-X, I-X (id2label) in" in err
    with open(tmp_path / "settings.json") as f:
        task = Task.from_config(json.load(f)["task"])
    assert type(task).__name__ == "TokenClassificationTask"
    assert task.config.labels == ["O", "B-X", "I-X"] == run_labels(out)
    # As --init, the folder is a tagger (head and tag names), not a classifier.
    init = load_init_model(str(tmp_path / "hf"))
    assert isinstance(init, AlbertTokenClassifier) and init.num_classes == 3


def test_transformers_folders_keep_the_two_heads_apart(tmp_path):
    x = random_inputs(batch=2, length=8, vocab=60)
    model = tagger(num_classes=3)
    save_hf_checkpoint(model, tmp_path / "tagger", labels=["O", "B-X", "I-X"])
    back = load_official_checkpoint(str(tmp_path / "tagger"), "token_classifier")
    assert max_abs_diff(back(x)["logits"], model(x)["logits"]) == 0.0
    assert back.conversion_report.new_heads == ("pooler",)  # transformers has none
    sentence = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=3)
    save_hf_checkpoint(sentence, tmp_path / "sentence")
    tags = load_official_checkpoint(
        str(tmp_path / "sentence"), "token_classifier", num_classes=3
    )
    assert tags.conversion_report.new_heads == ("token_classifier",)
    assert "output_weights" in tags.conversion_report.skipped_heads
