"""`Task.fit(init=<a model object>)`, as its docstring offers."""

import numpy as np
import pytest
from albert_test_case import TINY_FINETUNING, task_file

from albert_keras import AlbertBackbone, AlbertConfig
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask

TRAIN = task_file("rt_sentiment", "train.jsonl")
DEV = task_file("rt_sentiment", "dev.jsonl")


def test_a_backbone_object_needs_its_vocabulary_named(tmp_path):
    # It failed in os.fspath: "expected str, bytes or os.PathLike object,
    # not AlbertBackbone".
    backbone = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=8000))
    options = {k: v for k, v in TINY_FINETUNING.items() if k != "init"}
    options.update(epochs=1, max_train_examples=16, max_dev_examples=16)
    task = ClassificationTask(num_classes=2, text_fields=("text",))
    with pytest.raises(ValueError, match="`init` is a AlbertBackbone object.*vocab="):
        task.fit(backbone, TRAIN, DEV, output_dir=str(tmp_path / "a"), **options)
    before = backbone.get_weights()
    result = task.fit(
        backbone,
        TRAIN,
        DEV,
        output_dir=str(tmp_path / "b"),
        vocab=SPM_MODEL_PATH,
        **options,
    )
    assert 0.0 <= result["best"]["accuracy"] <= 1.0
    # The fitted model starts from this backbone's weights: its embeddings moved
    # from them by training only (a fresh init would be far from them).
    trained = task.model.backbone.embeddings.word_embeddings.numpy()
    assert np.abs(trained - before[0]).max() < 0.05
