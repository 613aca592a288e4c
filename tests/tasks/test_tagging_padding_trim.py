"""Tagging training batches cut to their longest row (`trim_padding`).

Before, every tagging batch ran at --max-seq-length, however short its
sentences (the other tasks' batches were cut). The reference is the
full-length batch of the same rows: the cut columns must be padding with no
label weight, and training on cut batches must be training on full ones
(the loss is the mean over the weighted words).
"""

import keras
import numpy as np
from albert_test_case import micro_config, task_file

from albert_keras import AlbertBackbone, AlbertTokenClassifier
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import TokenClassificationTask
from albert_keras.tasks.tagging_features import tagging_dataset
from albert_keras.tasks.task_datasets import PAD_MULTIPLE
from albert_keras.tokenizers import AlbertTokenizer
from albert_keras.training.optimizers import create_optimizer

LENGTH = 128


def _features():
    task = TokenClassificationTask(sequence_length=LENGTH)
    data = task.read(task_file("brown_tags", "train.jsonl"), training=True)
    data.examples = data.examples[:96]
    return task, task.features(data, AlbertTokenizer(SPM_MODEL_PATH))


def test_cut_columns_are_padding_without_label_weight():
    _, full = _features()
    start, widths = 0, []
    for inputs, labels, weights in tagging_dataset(full, 16, trim=True):
        rows = slice(start, start + len(labels))
        width = labels.shape[1]
        longest = full["padding_mask"][rows].sum(axis=1).max()
        assert width == LENGTH or (width % PAD_MULTIPLE == 0 and width >= longest)
        assert width - PAD_MULTIPLE < longest <= width
        got = {**inputs, "labels": labels, "weights": weights}
        for key, value in got.items():
            np.testing.assert_array_equal(value.numpy(), full[key][rows, :width])
        assert not full["padding_mask"][rows, width:].any()
        assert not full["weights"][rows, width:].any()
        widths.append(width)
        start = rows.stop
    assert start == 96 and min(widths) < LENGTH  # the data does cut batches
    # Batches to predict are cut too (`predict_logits` pads them back).
    assert {b[1].shape[1] for b in tagging_dataset(full, 16)} == set(widths)


def test_dev_and_predict_on_cut_batches_give_the_full_length_logits():
    """`word_predictions` (dev scores, `predict`) on cut batches: the words'
    logits of `model.predict` on full-length ones, in the file's order."""
    from albert_keras.tasks.tagging_features import word_logits

    task, features = _features()
    config = micro_config(8000, max_position_embeddings=LENGTH)
    model = AlbertTokenClassifier(AlbertBackbone(config), len(task.config.labels))
    full = model.predict(tagging_dataset(features, 16, trim=False), verbose=0)
    data = task.read(task_file("brown_tags", "train.jsonl"), training=True)
    data.examples = data.examples[:96]
    data.features = features  # of these 96 examples
    counts = [len(e["words"]) for e in data.examples]
    expected = word_logits(full["logits"], features["positions"], counts)
    got = task.word_predictions(model, data, tagging_dataset(features, 16))
    assert len(got) == 96
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_training_on_cut_batches_is_training_on_full_ones():
    """Two epochs of AdamW (XLA) without dropout: the same losses and weights."""
    task, features = _features()
    config = micro_config(
        8000,
        max_position_embeddings=LENGTH,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    runs = []
    for trim in (False, True):
        keras.utils.set_random_seed(1)
        classes = len(task.config.labels)
        model = AlbertTokenClassifier(AlbertBackbone(config), classes, dropout=0.0)
        loss, _ = task.losses()
        model.compile(optimizer=create_optimizer("adamw", 1e-3, 6, 0), loss=loss)
        batches = tagging_dataset(
            features, 32, True, seed=0, epochs=range(2), trim=trim
        )
        history = model.fit(batches, verbose=0, shuffle=False)
        runs.append((history.history["loss"], model.get_weights()))
    (loss_full, weights_full), (loss_cut, weights_cut) = runs
    np.testing.assert_allclose(loss_cut, loss_full, atol=1e-5)
    pairs = zip(weights_cut, weights_full, strict=True)
    assert max(np.max(np.abs(a - b)) for a, b in pairs) < 1e-5


def test_length_groups_hold_every_sentence_once_in_as_many_batches():
    _, features = _features()
    plain, grouped = (
        list(tagging_dataset(features, 8, True, seed=0, group_by_length=group))
        for group in (False, True)
    )
    assert len(grouped) == len(plain) == 12

    def rows(batches):
        return sorted(
            tuple(x["token_ids"].numpy()[i, : int(x["padding_mask"][i].numpy().sum())])
            for x, _, _ in batches
            for i in range(len(x["token_ids"]))
        )

    assert rows(grouped) == rows(plain)  # every sentence once
    # Longest first within each run of 8 batches: less padding.
    lengths = [b[0]["padding_mask"].numpy().sum(axis=1).max() for b in grouped[:8]]
    assert lengths == sorted(lengths, reverse=True)
    assert sum(b[1].shape[1] for b in grouped) < sum(b[1].shape[1] for b in plain)
