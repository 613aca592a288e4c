"""SQuAD v2 evaluation on a hand-made fixture whose EM/F1 were computed by hand."""

import json
import math

import numpy as np
import pytest

from albert_keras.tasks.squad_evaluation import (
    ANSWER_NOTHING,
    f1,
    finite_threshold,
    normalize_answer,
    squad_evaluate,
)

DATA = [
    {
        "paragraphs": [
            {
                "qas": [
                    # Answerable, exact after normalisation ("The" and "," go).
                    {"id": "a", "answers": [{"text": "The Eiffel Tower,"}]},
                    # Answerable, partial: gold "big red dog" vs "red dog house":
                    # common 2, P = 2/3, R = 2/3, F1 = 2/3, EM 0.
                    {"id": "b", "answers": [{"text": "big red dog"}]},
                    # Two golds: the best one counts (EM 1 with "Paris").
                    {"id": "c", "answers": [{"text": "London"}, {"text": "Paris"}]},
                    # Unanswerable, predicted "": EM 1, F1 1.
                    {"id": "d", "answers": []},
                    # Unanswerable, predicted text: EM 0, F1 0.
                    {"id": "e", "answers": []},
                ]
            }
        ]
    }
]
PREDICTIONS = {
    "a": "eiffel tower",
    "b": "red dog house",
    "c": "paris",
    "d": "",
    "e": "x",
}


def test_normalisation_and_f1():
    assert normalize_answer("  The  Eiffel, Tower! ") == "eiffel tower"
    assert f1("big red dog", "red dog house") == pytest.approx(2 / 3)
    assert f1("", "") == 1.0 and f1("", "x") == 0.0


def test_em_f1_has_and_no_answer_by_hand():
    result = squad_evaluate(DATA, PREDICTIONS)
    assert result["exact"] == pytest.approx(100 * 3 / 5)
    assert result["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1 + 1 + 0) / 5)
    assert result["HasAns_exact"] == pytest.approx(100 * 2 / 3)
    assert result["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3)
    assert result["NoAns_exact"] == pytest.approx(50.0)
    assert result["HasAns_total"] == 3 and result["NoAns_total"] == 2


def test_null_threshold_by_hand():
    # No-answer probabilities: answering "" above 0.5 fixes "e" and costs "b".
    na = {"a": 0.1, "b": 0.6, "c": 0.2, "d": 0.9, "e": 0.7}
    result = squad_evaluate(DATA, PREDICTIONS, na_probs=na, na_prob_threshold=0.5)
    # a 1, b -> "" (answerable) 0, c 1, d 1, e -> "" 1: EM 4/5.
    assert result["exact"] == pytest.approx(80.0)
    # Best EM threshold: start at 2 (both NoAns right with all ""), walk by
    # probability: a +1 (3), c +1 (4), b +0 (4), e -1 (3), d 0 (3): best 4 at
    # threshold 0.2 -> 80.0.
    assert result["best_exact"] == pytest.approx(80.0)
    assert result["best_exact_thresh"] == pytest.approx(0.2)
    # Best F1: a +1, c +1, b +2/3 -> 4.667 at 0.6, e -1, d 0.
    assert result["best_f1"] == pytest.approx(100 * (2 + 2 + 2 / 3) / 5)
    assert result["best_f1_thresh"] == pytest.approx(0.6)


def test_missing_predictions_are_counted():
    result = squad_evaluate(DATA, {"a": "Eiffel Tower"})
    assert result["missing"] == 4 and result["total"] == 1
    with pytest.raises(ValueError, match="No prediction"):
        squad_evaluate(DATA, {"zzz": "x"})


def test_best_threshold_over_a_subset_of_questions():
    # Only a, b and e predicted (a dev subset): the walk starts from the one
    # unanswerable question among them (e), not from all of the dataset's.
    predictions = {"a": "eiffel tower", "b": "red dog house", "e": "x"}
    na = {"a": 0.1, "b": 0.6, "e": 0.7}
    result = squad_evaluate(DATA, predictions, na_probs=na)
    # start 1 (e right with ""), a +1 (2), b +0 (2), e -1 (1): best 2/3 at 0.1.
    assert result["best_exact"] == pytest.approx(100 * 2 / 3)
    assert result["best_exact_thresh"] == pytest.approx(0.1)
    assert result["missing"] == 2


def test_when_answering_nothing_is_best_the_threshold_reproduces_it():
    # Wrong answers to every question, no-answer odds that are logits (some
    # negative, as ALBERT's are): answering "" everywhere is best (2 of 5, the
    # two unanswerable). The official script reports the threshold 0.0, which
    # would still answer a, b, c and d (odds <= 0); ours is the lowest
    # float32, below any odds (-inf is not strict JSON).
    wrong = {"a": "x", "b": "y", "c": "z", "d": "w", "e": "v"}
    odds = {"a": -2.0, "b": -1.0, "c": -0.5, "d": -0.2, "e": 2.0}
    result = squad_evaluate(DATA, wrong, na_probs=odds)
    assert result["best_f1"] == pytest.approx(40.0)
    assert result["best_f1_thresh"] == ANSWER_NOTHING == np.finfo("float32").min
    assert result["best_exact_thresh"] == ANSWER_NOTHING
    applied = squad_evaluate(
        DATA, wrong, na_probs=odds, na_prob_threshold=result["best_f1_thresh"]
    )
    assert applied["f1"] == pytest.approx(result["best_f1"])
    at_zero = squad_evaluate(DATA, wrong, na_probs=odds, na_prob_threshold=0.0)
    assert at_zero["f1"] == pytest.approx(20.0)  # only e: the official 0.0 misleads


def test_the_metrics_are_strict_json():
    # metrics.json is read by JSON.parse and jq: no -Infinity, NaN or Infinity,
    # whether answering nothing is best, or a question has no valid span (its
    # odds inf) where the best threshold falls.
    wrong = {"a": "x", "b": "y", "c": "z", "d": "w", "e": "v"}
    cases = [
        (wrong, {"a": -2.0, "b": -1.0, "c": -0.5, "d": -0.2, "e": 2.0}),
        (PREDICTIONS, {"a": 0.1, "b": 0.6, "c": 0.2, "d": 0.9, "e": math.inf}),
        (
            dict(PREDICTIONS, e=""),
            {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": math.inf},
        ),
    ]
    for predictions, odds in cases:
        result = squad_evaluate(DATA, predictions, na_probs=odds)
        json.dumps(result, allow_nan=False)
        # The threshold reported gives the best score when applied.
        for kind in ("exact", "f1"):
            applied = squad_evaluate(
                DATA,
                predictions,
                na_probs=odds,
                na_prob_threshold=result[f"best_{kind}_thresh"],
            )
            assert applied[kind] == pytest.approx(result[f"best_{kind}"])


def test_a_finite_threshold_answers_as_the_infinite_one():
    # In float64 (predict) and float32 (a served model): the same answers for
    # any odds. Odds are inf only where no span is valid: the answer is ""
    # whichever side of the threshold.
    odds = np.array([-3.4e38, -1e30, -3.0, 0.0, 7.5, 3e38, np.inf])
    spans = np.array(["a", "b", "c", "d", "e", "f", ""])
    for infinite in (-math.inf, math.inf):
        finite = finite_threshold(infinite)
        # Finite in float32 too: Keras logs and a served model convert it.
        assert math.isfinite(finite) and np.isfinite(np.float32(finite))
        for dtype in ("float64", "float32"):
            values = odds.astype(dtype)
            served = np.where(values > np.asarray(finite, dtype), "", spans)
            np.testing.assert_array_equal(
                served, np.where(values > infinite, "", spans)
            )
    assert finite_threshold(0.25) == 0.25


def test_dev_answers_without_a_start_or_a_text_are_scored_not_dropped(tmp_path):
    """Evaluation needs only the answers' texts (as the official script):
    a dev answer without `answer_start` dropped its question from the
    predictions and the scores, and an answer without `text` beside others
    failed the evaluation with KeyError: 'text'."""
    from albert_keras.tasks.squad_reader import answerable, read_squad_file

    qas = [
        {"id": "nostart", "question": "Who?", "answers": [{"text": "Emma"}]},
        {
            "id": "mixed",
            "question": "Where?",
            "answers": [{"answer_start": 0}, {"text": "Hartfield"}],
        },
    ]
    data = [{"paragraphs": [{"context": "Emma lived at Hartfield.", "qas": qas}]}]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"version": "v2.0", "data": data}))
    examples, dataset, report = read_squad_file(str(path), training=False)
    kept = answerable(examples)
    assert [e["id"] for e in kept] == ["nostart", "mixed"], report.skipped
    assert all(not e["is_impossible"] for e in kept)
    result = squad_evaluate(dataset, {"nostart": "emma", "mixed": "Hartfield"})
    assert (result["exact"], result["total"], result["missing"]) == (100.0, 2, 0)
    # Training still needs a span: both are skipped there, and named.
    with pytest.raises(ValueError, match="answer without text or answer_start: 2"):
        read_squad_file(str(path), training=True)
