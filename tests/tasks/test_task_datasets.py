"""Packed task pipelines against the official run_classifier packing."""

import os
import sys

import numpy as np
import pytest
from albert_test_case import task_file as _task

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import MultipleChoiceTask, task_from_name
from albert_keras.tasks.task_datasets import choice_dataset, text_dataset
from albert_keras.tokenizers import AlbertTokenizer

TOKENIZER_TESTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tokenizers")


def _official():
    if TOKENIZER_TESTS not in sys.path:
        sys.path.insert(0, TOKENIZER_TESTS)
    import official_tokenization

    return official_tokenization


def _rows(dataset):
    rows, labels = [], []
    for features, label in dataset:
        rows += list(
            zip(
                features["token_ids"].numpy().tolist(),
                features["segment_ids"].numpy().tolist(),
                features["padding_mask"].numpy().tolist(),
                strict=True,
            )
        )
        labels += label.numpy().tolist()
    return rows, labels


@pytest.mark.parametrize(
    "task, name, length", [("pair", "vitaminc", 48), ("classify", "rt_sentiment", 24)]
)
def test_packing_matches_the_official_code(task, name, length):
    """The task's own pipeline (`Task.dataset`) packs as run_classifier does."""
    official = _official()
    task = task_from_name(task, sequence_length=length)
    data = task.read(_task(name, "dev.jsonl"), training=True)
    examples = data.examples
    rows, labels = _rows(task.dataset(data, AlbertTokenizer(SPM_MODEL_PATH), 64))
    report = data.report
    tokenizer = official.tokenization.FullTokenizer(
        None, do_lower_case=True, spm_model_file=SPM_MODEL_PATH
    )
    expected = official.official_classifier_features(
        tokenizer,
        [(e["text_a"], e["text_b"]) for e in examples],
        length,
        use_spm=True,
        lower=True,
    )
    same = sum(tuple(r) == tuple(e) for r, e in zip(rows, expected, strict=True))
    print(f"\n{name} packed at {length}: {same}/{len(rows)} identical to official")
    # SentencePiece score ties (tf-text vs the Python package) may differ.
    assert same >= len(rows) - 2
    assert labels == [e["label"] for e in examples]

    def count(text):
        text = official.tokenization.preprocess_text(text or "", lower=True)
        return len(tokenizer.tokenize(text))

    cut = sum(
        count(e["text_a"]) + count(e["text_b"]) > length - (3 if e["text_b"] else 2)
        for e in examples
    )
    assert cut > 0 and report.noted[f"cut to sequence_length={length}"] == cut


def test_training_pipeline_shuffles_every_epoch():
    examples = [
        {"text_a": f"text number {i}", "text_b": None, "label": i % 2}
        for i in range(64)
    ]
    dataset = text_dataset(
        examples, AlbertTokenizer(SPM_MODEL_PATH), 16, 8, training=True
    )
    first = np.concatenate([y.numpy() for _, y in dataset])
    epoch_one = [x["token_ids"].numpy() for x, _ in dataset]
    epoch_two = [x["token_ids"].numpy() for x, _ in dataset]
    assert sorted(first.tolist()) == sorted(e["label"] for e in examples)
    assert not all(
        np.array_equal(a, b) for a, b in zip(epoch_one, epoch_two, strict=True)
    )


def test_regression_labels_are_float():
    examples = [{"text_a": "a b", "text_b": "c", "label": 0.25}]
    _, label = next(
        iter(
            text_dataset(
                examples, AlbertTokenizer(SPM_MODEL_PATH), 8, 4, regression=True
            )
        )
    )
    assert label.dtype.name == "float32" and label.numpy().tolist() == [0.25]


def test_choice_rows_are_context_option_pairs():
    official = _official()
    task = MultipleChoiceTask()
    examples = task.read(_task("social_iqa", "dev.jsonl"), training=True).examples
    examples, choices = examples[:40], task.config.num_choices
    dataset = choice_dataset(examples, AlbertTokenizer(SPM_MODEL_PATH), 40, 16)
    features, labels = next(iter(dataset))
    assert features["token_ids"].shape == (16, choices, 40)
    tokenizer = official.tokenization.FullTokenizer(
        None, do_lower_case=True, spm_model_file=SPM_MODEL_PATH
    )
    pairs = [(e["context"], option) for e in examples[:16] for option in e["options"]]
    expected = official.official_classifier_features(
        tokenizer, pairs, 40, use_spm=True, lower=True
    )
    ours = features["token_ids"].numpy().reshape(16 * choices, 40).tolist()
    assert ours == [e[0] for e in expected]
    assert labels.numpy().tolist() == [e["label"] for e in examples[:16]]
