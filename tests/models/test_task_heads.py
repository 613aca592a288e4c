"""Classifier, span QA and multiple choice: numbers of the heads, fit, save/load."""

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs, run_model_test
from numpy_ops import f64, randomize

from albert_keras import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertSpanQA,
)

CONFIG = micro_config(vocab_size=60)


def test_classifier_head_and_fit():
    model = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=3)
    randomize(model, seed=2)
    x = random_inputs(batch=4, length=8, vocab=60)
    pooled = np.asarray(model.backbone(x)["pooled_output"], "float64")
    expected = pooled @ f64(model.classifier.kernel) + f64(model.classifier.bias)
    assert max_abs_diff(model(x)["logits"], expected) < 1e-5
    # Plain y (not a dict) works with `fit`, as users write it.
    run_model_test(
        model,
        x,
        np.array([0, 1, 2, 1]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )


def test_regression():
    model = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=1)
    x = random_inputs(batch=4, length=8, vocab=60)
    history = run_model_test(model, x, np.array([0.5, 1.0, 4.5, 3.0]), loss="mse")
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_bad_num_classes():
    with pytest.raises(ValueError, match="num_classes=0"):
        AlbertClassifier(AlbertBackbone(CONFIG), num_classes=0)


@pytest.mark.parametrize("num_choices", [0, -1, None, "3", 2.0])
def test_bad_num_choices(num_choices):
    # num_choices=0 used to build a model answering a batch of 2 with logits
    # [1, 0], None one returning [batch x choices, 1].
    with pytest.raises(ValueError, match=f"num_choices={num_choices!r}"):
        AlbertMultipleChoice(AlbertBackbone(CONFIG), num_choices=num_choices)


@pytest.mark.parametrize(
    "build, typo",
    [
        (lambda b: AlbertClassifier(b, num_clases=3), "num_clases"),
        (lambda b: AlbertMultipleChoice(b, num_choice=3), "num_choice"),
        (lambda b: AlbertSpanQA(b, dropout=0.2), "dropout"),
        (lambda b: AlbertBackbone(CONFIG, dtpye="mixed_bfloat16"), "dtpye"),
    ],
)
def test_a_misspelt_argument_is_refused_not_dropped(build, typo):
    # Keras's functional constructor dropped it: num_clases=3 built 2 classes.
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{typo}'"):
        build(AlbertBackbone(CONFIG))
    named = AlbertClassifier(AlbertBackbone(CONFIG), 3, name="head", trainable=False)
    assert (named.name, named.trainable, named.num_classes) == ("head", False, 3)


def test_span_qa():
    model = AlbertSpanQA(AlbertBackbone(CONFIG))
    randomize(model, seed=3)
    x = random_inputs(batch=2, length=8, vocab=60)
    seq = np.asarray(model.backbone(x)["sequence_output"], "float64")
    logits = seq @ f64(model.span_head.kernel) + f64(model.span_head.bias)
    out = model(x)
    assert max_abs_diff(out["start_logits"], logits[..., 0]) < 1e-5
    assert max_abs_diff(out["end_logits"], logits[..., 1]) < 1e-5
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    y = {"start_logits": np.array([1, 2]), "end_logits": np.array([3, 4])}
    run_model_test(model, x, y, loss=loss)


def test_multiple_choice():
    model = AlbertMultipleChoice(AlbertBackbone(CONFIG), num_choices=3)
    randomize(model, seed=4)
    flat = random_inputs(batch=6, length=8, vocab=60)
    x = {k: v.reshape(2, 3, 8) for k, v in flat.items()}
    pooled = np.asarray(model.backbone(flat)["pooled_output"], "float64")
    scores = pooled @ f64(model.choice_head.kernel) + f64(model.choice_head.bias)
    assert max_abs_diff(model(x)["logits"], scores.reshape(2, 3)) < 1e-5
    run_model_test(
        model,
        x,
        np.array([0, 2]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )


def test_fit_and_evaluate_trace_their_step_once(monkeypatch):
    """The optimizer's slots and the metric trackers exist before the first
    trace: a `tf.function` that creates variables traces a second time, which
    doubled the first `fit`'s CPU time. No batch is taken to build them: two
    batches and `steps_per_epoch=2` are two steps."""
    import tensorflow as tf

    traces = {"train": 0, "test": 0}
    for kind in traces:
        method = getattr(AlbertClassifier, f"{kind}_step")

        def counted(self, *args, _kind=kind, _method=method):
            traces[_kind] += 1
            return _method(self, *args)

        monkeypatch.setattr(AlbertClassifier, f"{kind}_step", counted)
    model = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=2)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )
    x = random_inputs(batch=8, length=8, vocab=60)
    data = tf.data.Dataset.from_tensor_slices((x, np.arange(8) % 2)).batch(4)
    history = model.fit(data, steps_per_epoch=2, epochs=1, shuffle=False, verbose=0)
    assert int(model.optimizer.iterations) == 2
    assert set(history.history) == {"loss", "accuracy"}
    model.evaluate(data, verbose=0)
    assert traces == {"train": 1, "test": 1}
