"""Flags a conversion target does not use are refused, not ignored.

`albert-convert best.keras --to-hf --model backbone` wrote the classifier
(AlbertForSequenceClassification) all the same; --num-classes, --text-model,
--saved-model and --config were dropped as quietly with --to-hf,
--to-official and --to-keras-hub.
"""

import os

import pytest

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from checkpoints_convert.cli import main as convert_main

TINY = {"vocab_size": 100, "embedding_size": 8, "hidden_size": 16}
TINY.update(num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("run") / "best.keras")
    AlbertClassifier(AlbertBackbone(AlbertConfig(**TINY)), num_classes=2).save(path)
    return path


@pytest.mark.parametrize(
    "target, flags, named",
    [
        ("--to-hf", ["--model", "backbone"], "--model"),
        ("--to-hf", ["--num-classes", "5", "--text-model", "64"], "--num-classes"),
        ("--to-official", ["--saved-model", "sm"], "--saved-model"),
        ("--to-keras-hub", ["--null-threshold", "1.5"], "--null-threshold"),
    ],
)
def test_a_flag_the_target_ignores_is_refused(
    classifier, target, flags, named, tmp_path, capsys
):
    output = str(tmp_path / "out")
    assert convert_main([classifier, target, "--output", output, *flags]) == 2
    err = capsys.readouterr().err
    assert f"{named}" in err and f"no effect with {target}" in err, err
    assert not os.path.exists(output)


def test_the_flags_a_target_uses_still_work(classifier, tmp_path):
    output = str(tmp_path / "hf")
    assert convert_main([classifier, "--to-hf", "--output", output]) == 0
    output = str(tmp_path / "c.keras")
    flags = ["--model", "classifier", "--num-classes", "2"]
    assert convert_main([classifier, "--output", output, *flags]) == 0
