"""Batches cut to their longest row (`trim_padding`) and grouped by length.

The reference is the full-length packing of the same rows by `AlbertPacker`:
the cut columns must be padding, and the model must give the same outputs
(and the same training losses) on the cut batches.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import micro_config

from albert_keras import AlbertBackbone
from albert_keras.models import AlbertClassifier, AlbertMultipleChoice
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.tasks.task_datasets import (
    GROUP_BATCHES,
    PAD_MULTIPLE,
    choice_dataset,
    text_dataset,
    tokenize_texts,
)
from albert_keras.tokenizers import AlbertPacker, AlbertTokenizer

LENGTH = 128
WORDS = "the quick brown fox jumps over a lazy dog while Emma reads her letters".split()


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL_PATH)


def _examples(count, seed=0, pairs=False):
    rng = np.random.default_rng(seed)

    def text():
        # Mostly short texts and a long tail, as real sentences.
        size = int(min(rng.geometric(0.08), 90))
        return " ".join(rng.choice(WORDS, size))

    return [
        {"text_a": text(), "text_b": text() if pairs else None, "label": i % 2}
        for i in range(count)
    ]


def _full_length(tokenizer, examples):
    """`AlbertPacker` at LENGTH on the examples: the untrimmed reference."""
    a = tokenize_texts(tokenizer, [e["text_a"] for e in examples])
    b = tokenize_texts(tokenizer, [e["text_b"] or "" for e in examples])
    packed = AlbertPacker.for_tokenizer(tokenizer, LENGTH)(a, b)
    return {k: v.numpy() for k, v in packed.items()}


def _backbone(tokenizer):
    config = micro_config(
        tokenizer.vocabulary_size(),
        max_position_embeddings=LENGTH,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    keras.utils.set_random_seed(1)
    return AlbertBackbone(config)


@pytest.mark.parametrize("pairs", [False, True])
def test_cut_columns_are_padding_and_rows_are_unchanged(tokenizer, pairs):
    examples = _examples(80, pairs=pairs)
    full = _full_length(tokenizer, examples)
    lengths, start = [], 0
    for features, labels in text_dataset(examples, tokenizer, LENGTH, 16):
        rows = slice(start, start + len(labels))
        width = features["token_ids"].shape[1]
        longest = full["padding_mask"][rows].sum(axis=1).max()
        assert width == LENGTH or (width % PAD_MULTIPLE == 0 and width >= longest)
        assert width - PAD_MULTIPLE < longest <= width
        for key, value in features.items():
            np.testing.assert_array_equal(value.numpy(), full[key][rows, :width])
        assert not full["padding_mask"][rows, width:].any()
        lengths.append(width)
        start = rows.stop
    assert start == len(examples)
    assert min(lengths) < LENGTH  # the test data does cut some batches


def test_the_models_outputs_are_those_of_full_length_batches(tokenizer):
    backbone = _backbone(tokenizer)
    classifier = AlbertClassifier(backbone, num_classes=3)
    examples = _examples(48, seed=3, pairs=True)
    full = _full_length(tokenizer, examples)
    cut = text_dataset(examples, tokenizer, LENGTH, 48)
    features, _ = next(iter(cut))
    assert features["token_ids"].shape[1] < LENGTH
    expected = classifier.predict(full, verbose=0)["logits"]
    got = classifier.predict(features, verbose=0)["logits"]
    assert np.max(np.abs(got - expected)) < 1e-6

    choice = AlbertMultipleChoice(backbone, num_choices=3)
    rows = [
        {
            "context": e["text_a"],
            "options": ["a dog", "the fox jumps", "no"],
            "label": 1,
        }
        for e in examples[:12]
    ]
    features, _ = next(iter(choice_dataset(rows, tokenizer, LENGTH, 12)))
    width = features["token_ids"].shape[-1]
    assert width < LENGTH
    padded = {
        k: np.pad(v.numpy(), [(0, 0), (0, 0), (0, LENGTH - width)])
        for k, v in features.items()
    }
    expected = choice.predict(padded, verbose=0)["logits"]
    got = choice.predict(features, verbose=0)["logits"]
    assert np.max(np.abs(got - expected)) < 1e-6


def test_training_on_cut_batches_is_training_on_full_ones(tokenizer):
    """Three AdamW steps (XLA) without dropout: the same losses and weights."""
    examples = _examples(96, seed=5)
    full = _full_length(tokenizer, examples)
    labels = np.array([e["label"] for e in examples], "int32")
    runs = []
    for cut in (False, True):
        model = AlbertClassifier(_backbone(tokenizer), num_classes=2, dropout=0.0)
        task = ClassificationTask()
        model.compile(
            optimizer=keras.optimizers.AdamW(1e-3),
            loss=task.losses()[0],
            jit_compile=True,
        )
        if cut:
            batches = text_dataset(examples, tokenizer, LENGTH, 32)
            assert max(x["token_ids"].shape[1] for x, _ in batches) < LENGTH
        else:
            batches = tf.data.Dataset.from_tensor_slices((full, labels)).batch(32)
        history = model.fit(batches, epochs=2, verbose=0, shuffle=False)
        runs.append((history.history["loss"], model.get_weights()))
    (loss_full, weights_full), (loss_cut, weights_cut) = runs
    np.testing.assert_allclose(loss_cut, loss_full, atol=1e-5)
    assert (
        max(
            np.max(np.abs(a - b))
            for a, b in zip(weights_cut, weights_full, strict=True)
        )
        < 1e-5
    )


def _epoch(examples, tokenizer, group, seed=0, epoch=0):
    dataset = text_dataset(
        examples,
        tokenizer,
        LENGTH,
        8,
        training=True,
        seed=seed,
        epochs=range(epoch, epoch + 1),
        group_by_length=group,
    )
    return [(x["padding_mask"].numpy(), y.numpy()) for x, y in dataset]


def test_length_groups_hold_every_example_once_in_as_many_batches(tokenizer):
    examples = _examples(200, seed=7)
    for i, example in enumerate(examples):
        example["label"] = i  # to follow each example
    plain = _epoch(examples, tokenizer, group=False)
    grouped = _epoch(examples, tokenizer, group=True)
    assert len(grouped) == len(plain) == 25
    seen = np.concatenate([y for _, y in grouped])
    assert sorted(seen.tolist()) == list(range(200))
    # Each run of GROUP_BATCHES batches is sorted, longest first.
    lengths = np.concatenate([m.sum(axis=1) for m, _ in grouped])
    for start in range(0, 200, 8 * GROUP_BATCHES):
        run = lengths[start : start + 8 * GROUP_BATCHES]
        assert (np.diff(run) <= 0).all()
    # And from the same examples as the plain shuffle's run.
    plain_seen = np.concatenate([y for _, y in plain])
    chunk = 8 * GROUP_BATCHES
    for start in range(0, 200, chunk):
        assert sorted(seen[start : start + chunk]) == sorted(
            plain_seen[start : start + chunk]
        )
    columns = sum(m.shape[1] for m, _ in grouped)
    assert columns < 0.8 * sum(m.shape[1] for m, _ in plain)
    # Epoch e is the same whether or not epochs before it ran (resumes).
    again = _epoch(examples, tokenizer, group=True, epoch=0)
    assert all((a[1] == b[1]).all() for a, b in zip(again, grouped, strict=True))
    other = _epoch(examples, tokenizer, group=True, epoch=1)
    assert not all(
        len(a[1]) == len(b[1]) and (a[1] == b[1]).all()
        for a, b in zip(other, grouped, strict=True)
    )


def test_choice_rows_group_by_their_longest_option(tokenizer):
    examples = [
        {
            "context": e["text_a"],
            "options": ["yes", " ".join(WORDS[: i % 9]), "no"],
            "label": i % 3,
        }
        for i, e in enumerate(_examples(64, seed=11))
    ]
    dataset = choice_dataset(
        examples, tokenizer, LENGTH, 8, training=True, group_by_length=True
    )
    lengths = np.concatenate(
        [x["padding_mask"].numpy().sum(axis=2).max(axis=1) for x, _ in dataset]
    )
    assert len(lengths) == 64 and (np.diff(lengths) <= 0).all()


def test_squad_refuses_the_flag(tmp_path):
    from albert_keras.tasks import SquadTask

    with pytest.raises(ValueError, match="SquadTask does not group by length"):
        run_finetuning(
            SquadTask(),
            [],
            [],
            "albert_tiny",
            str(tmp_path / "run"),
            group_by_length=True,
        )
