"""SQuAD features against the official `squad_utils.convert_examples_to_features`."""

import json
import os
import sys

import numpy as np
import pytest
from albert_test_case import task_file

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks.data_report import DataReport
from albert_keras.tasks.span_predictions import decode_spans
from albert_keras.tasks.squad_features import (
    keep_null_windows,
    squad_dataset,
    squad_features,
)
from albert_keras.tasks.squad_reader import read_squad_file
from albert_keras.tokenizers import AlbertTokenizer

LENGTH, STRIDE, QUERY = 128, 64, 32
TOKENIZER_TESTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tokenizers")


@pytest.fixture(scope="module")
def disfl_train():
    examples, _, report = read_squad_file(task_file("disfl_qa", "train.json"), True)
    return examples[:240], report


def _official_training_features(examples):
    if TOKENIZER_TESTS not in sys.path:
        sys.path.insert(0, TOKENIZER_TESTS)
    from official_tokenization import squad_utils, tokenization

    tokenizer = tokenization.FullTokenizer(
        None, do_lower_case=True, spm_model_file=SPM_MODEL_PATH
    )
    per_example, failed = {}, []
    for index, e in enumerate(examples):
        context = " ".join(e["words"])
        if e["is_impossible"]:
            answer, start = "", -1
        else:
            first, last = e["answer_words"]
            answer = " ".join(e["words"][first : last + 1])
            start = len(" ".join(e["words"][:first])) + (1 if first else 0)
        example = squad_utils.SquadExample(
            qas_id=str(index),
            question_text=e["question"],
            paragraph_text=context,
            orig_answer_text=answer,
            start_position=start,
            is_impossible=e["is_impossible"],
        )
        found = []
        try:
            squad_utils.convert_examples_to_features(
                [example],
                tokenizer,
                LENGTH,
                STRIDE,
                QUERY,
                is_training=True,
                output_fn=found.append,
                do_lower_case=True,
            )
        except (IndexError, AssertionError):
            failed.append(index)
            continue
        per_example[index] = found
    return per_example, failed


def test_training_features_match_the_official_code(disfl_train):
    examples, _ = disfl_train
    features, _ = squad_features(
        examples, AlbertTokenizer(SPM_MODEL_PATH), LENGTH, STRIDE, QUERY
    )
    official, failed = _official_training_features(examples)
    # The official character alignment (`_convert_index`) raises on many real
    # paragraphs (an index past the end); those cannot be compared.
    assert len(failed) < len(examples) // 2, failed
    compared = differ = positives = 0
    for index, windows in official.items():
        rows = np.flatnonzero(features["example_index"] == index)
        assert len(rows) == len(windows), index
        for row, window in zip(rows, windows, strict=True):
            compared += 1
            ours = (
                features["token_ids"][row].tolist(),
                features["segment_ids"][row].tolist(),
                features["p_mask"][row].tolist(),
                int(features["start_positions"][row]),
                int(features["end_positions"][row]),
                int(features["is_impossible"][row]),
            )
            theirs = (
                window.input_ids,
                window.segment_ids,
                window.p_mask,
                window.start_position,
                window.end_position,
                int(window.is_impossible),
            )
            differ += ours != theirs
            positives += not window.is_impossible
    print(
        f"\nSQuAD training windows vs official: {compared - differ}/{compared} "
        f"identical ({positives} with an answer), {len(failed)} examples the "
        "official code fails on"
    )
    assert compared > 300 and positives > 60
    assert differ == 0


def test_gold_positions_decode_to_the_answer(disfl_train):
    examples, _ = disfl_train
    features, contexts = squad_features(
        examples, AlbertTokenizer(SPM_MODEL_PATH), LENGTH, STRIDE, QUERY
    )
    # Logits that put all mass on the gold span decode to the gold text.
    n, length = features["token_ids"].shape
    start = np.full((n, length), -10.0)
    end = np.full((n, length), -10.0)
    start[np.arange(n), features["start_positions"]] = 10.0
    end[np.arange(n), features["end_positions"]] = 10.0
    answers, null_odds = decode_spans(
        features, contexts, {"start_logits": start, "end_logits": end}, "simple"
    )
    right = total = 0
    for index, e in enumerate(examples):
        if e["is_impossible"]:
            continue
        total += 1
        right += answers[index] == " ".join(e["answers"][0].split())
    assert total > 100 and right / total > 0.97, (right, total)
    # Unanswerable questions: only [CLS] is hot, so no span beats the null.
    impossible = [i for i, e in enumerate(examples) if e["is_impossible"]]
    assert impossible and all(null_odds[i] > 0 for i in impossible)


def test_report_and_dataset(disfl_train):
    examples, report = disfl_train
    with open(task_file("disfl_qa", "train.json"), encoding="utf-8") as f:
        data = json.load(f)["data"]
    questions = sum(len(p["qas"]) for a in data for p in a["paragraphs"])
    assert report.kept == questions and not report.skipped
    report = DataReport("x")
    features, _ = squad_features(
        examples[:20],
        AlbertTokenizer(SPM_MODEL_PATH),
        LENGTH,
        STRIDE,
        QUERY,
        report=report,
    )
    assert report.noted["context split into several windows"] > 0
    x, y = next(iter(squad_dataset(features, 4, head="v2")))
    assert sorted(x) == [
        "p_mask",
        "padding_mask",
        "segment_ids",
        "start_positions",
        "token_ids",
    ]
    np.testing.assert_array_equal(y["start_log_probs"], features["start_positions"][:4])
    np.testing.assert_array_equal(
        y["cls_logits"], features["is_impossible"][:4].astype("float32")
    )


def test_keep_null_windows(disfl_train):
    examples, _ = disfl_train
    features, _ = squad_features(
        examples, AlbertTokenizer(SPM_MODEL_PATH), LENGTH, STRIDE, QUERY
    )
    null = features["start_positions"] == 0
    assert 0.5 < null.mean() < 0.95  # most 128-token windows hold no answer
    kept = keep_null_windows(features, 0.25, seed=3)
    # Every window with an answer stays, with all its columns, in order.
    answered = {k: v[~null] for k, v in features.items()}
    kept_answered = kept["start_positions"] > 0
    for key, column in answered.items():
        np.testing.assert_array_equal(kept[key][kept_answered], column, err_msg=key)
    share = (kept["start_positions"] == 0).sum() / null.sum()
    assert abs(share - 0.25) < 0.06, share
    assert np.all(np.diff(kept["example_index"]) >= 0)
    again = keep_null_windows(features, 0.25, seed=3)
    np.testing.assert_array_equal(again["token_ids"], kept["token_ids"])
    assert keep_null_windows(features, 1.0, seed=3) is features
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="share of null windows"):
            keep_null_windows(features, bad)
