"""metrics.json's held-out figures: the last epoch's, scored once."""

import json

import keras
import numpy as np
import tensorflow as tf
from albert_test_case import micro_config, official_features

from albert_keras import AlbertPretrainer
from albert_keras.pretraining.pretraining_run import run_pretraining

CONFIG = micro_config(50)


def _dataset(skip):
    features = official_features(32, 12)
    return tf.data.Dataset.from_tensor_slices(features).repeat().batch(4).skip(skip)


def test_the_held_out_set_is_scored_once_per_epoch_not_again_at_the_end(
    tmp_path, monkeypatch
):
    """The final scoring repeated the last epoch's validation on the same
    weights: a whole extra pass over the held-out set per run."""
    calls = []
    evaluate = AlbertPretrainer.evaluate

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("steps"))
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(AlbertPretrainer, "evaluate", counted)
    held_out = tf.data.Dataset.from_tensor_slices(official_features(12, 12, seed=1))
    keras.utils.set_random_seed(0)
    result = run_pretraining(
        _dataset,
        CONFIG,
        str(tmp_path / "run"),
        global_batch_size=4,
        sequence_length=12,
        num_train_steps=4,
        num_warmup_steps=0,
        steps_per_epoch=2,
        save_every=2,
        jit_compile=False,
        verbose=0,
        eval_dataset=held_out.batch(4),
    )
    assert len(calls) == 2, calls  # once after each of the two epochs
    monkeypatch.setattr(AlbertPretrainer, "evaluate", evaluate)
    again = result["model"].evaluate(
        held_out.batch(4).map(AlbertPretrainer.features_to_xy),
        verbose=0,
        return_dict=True,
    )
    with open(tmp_path / "run" / "metrics.json") as f:
        written = json.load(f)
    assert {k[len("eval_") :] for k in written if k.startswith("eval_")} == set(again)
    for key, value in again.items():
        assert np.isclose(written[f"eval_{key}"], value, rtol=1e-6, atol=1e-6), key
