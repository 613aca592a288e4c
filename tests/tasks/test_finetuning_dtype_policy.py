"""`fit(mixed_precision=True)` builds in bfloat16 and leaves the caller's policy."""

import keras
import pytest
from albert_test_case import TINY_FINETUNING, task_file

import checkpoints_convert.backbone_loader
from albert_keras.tasks import ClassificationTask


class _Stop(Exception):
    pass


@pytest.mark.parametrize("before", ["float32", "mixed_bfloat16"])
def test_mixed_precision_restores_the_global_policy(before, tmp_path, monkeypatch):
    # It used to set float32 afterwards, whatever the caller had set.
    seen = []

    def load_backbone(*args, **kwargs):
        seen.append(keras.mixed_precision.dtype_policy().name)
        raise _Stop  # the policy is what is tested, not the training

    monkeypatch.setattr(
        checkpoints_convert.backbone_loader, "load_backbone", load_backbone
    )
    keras.mixed_precision.set_dtype_policy(before)
    try:
        task = ClassificationTask(num_classes=2, text_fields=("text",))
        options = dict(TINY_FINETUNING, mixed_precision=True)
        with pytest.raises(_Stop):
            task.fit(
                options.pop("init"),
                task_file("rt_sentiment", "train.jsonl"),
                task_file("rt_sentiment", "dev.jsonl"),
                output_dir=str(tmp_path / "run"),
                **options,
            )
        assert seen == ["mixed_bfloat16"]
        assert keras.mixed_precision.dtype_policy().name == before
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
