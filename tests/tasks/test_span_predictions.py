"""Span decoding on hand-made logits: every rule of the official n-best search."""

import numpy as np
import pytest

from albert_keras.tasks.span_predictions import decode_spans

WORDS = ["w0", "w1", "w2", "w3", "w4", "w5"]
NEG = -20.0


def _features(windows):
    """windows: list of (example, doc_start, doc_length, max_context list); the
    question takes 3 positions ([CLS] q [SEP]), so the window's context
    starts at position 3; length 12."""
    rows = {k: [] for k in ("example_index", "doc_start", "doc_offset", "doc_length")}
    rows["token_is_max_context"] = []
    for example, start, length, max_context in windows:
        rows["example_index"].append(example)
        rows["doc_start"].append(start)
        rows["doc_offset"].append(3)
        rows["doc_length"].append(length)
        mask = np.zeros(12, "int32")
        mask[3 : 3 + length] = max_context
        rows["token_is_max_context"].append(mask)
    return {k: np.asarray(v) for k, v in rows.items()}


def _logits(spans, null=(0.0, 0.0), windows=1):
    start = np.full((windows, 12), NEG)
    end = np.full((windows, 12), NEG)
    for window, s, e, value in spans:
        start[window, s] = max(start[window, s], value)
        end[window, e] = max(end[window, e], value)
    start[:, 0], end[:, 0] = null
    return {"start_logits": start, "end_logits": end}


# Six words, one token each: token t of the context is word t.
CONTEXT = [(np.arange(6), WORDS)]

# The v2 beam with start_n_top 2, end_n_top 2: candidate (i, j) at i * 2 + j.
V2_OUTPUTS = {
    "start_top_index": np.array([[4, 6]]),
    "start_top_log_probs": np.array([[-0.5, -1.0]]),
    "end_top_index": np.array([[3, 5, 8, 7]]),
    "end_top_log_probs": np.array([[-0.1, -0.9, -0.2, -0.3]]),
    "cls_logits": np.array([-2.5]),
}


def test_best_span_and_null_odds():
    features = _features([(0, 0, 6, [1] * 6)])
    answers, odds = decode_spans(
        features, CONTEXT, _logits([(0, 4, 5, 3.0)], null=(1.0, 0.5)), "simple"
    )
    assert answers == {0: "w1 w2"}
    assert odds == {0: pytest.approx(1.5 - 6.0)}


def test_invalid_spans_are_skipped():
    features = _features([(0, 0, 6, [1, 1, 0, 1, 1, 1])])
    # The best raw pair (start 5 -> end 4) ends before it starts; start 1 is
    # in the question; start 5 (context token 2) is not its max context.
    logits = _logits([(0, 4, 6, 1.0)])
    logits["start_logits"][0, 1] = 9.0  # question token
    logits["start_logits"][0, 5] = 8.0  # not max context
    logits["end_logits"][0, 3] = 7.0  # end before start for most starts
    answers, _ = decode_spans(features, CONTEXT, logits, "simple")
    assert answers == {0: "w1 w2 w3"}
    # max_answer_length 2 rules the 3-token span out: the best valid one left.
    answers, _ = decode_spans(features, CONTEXT, logits, "simple", max_answer_length=2)
    assert answers == {0: "w0"}


def test_windows_of_one_example_compete_and_the_null_is_their_minimum():
    # Two windows over tokens 0-3 and 2-5; the second has the better span.
    features = _features([(0, 0, 4, [1, 1, 1, 0]), (0, 2, 4, [0, 1, 1, 1])])
    logits = _logits([(0, 3, 4, 2.0), (1, 5, 6, 4.0)], windows=2)
    logits["start_logits"][:, 0] = [3.0, 1.0]
    logits["end_logits"][:, 0] = [0.0, 0.0]
    answers, odds = decode_spans(features, CONTEXT, logits, "simple")
    assert answers == {0: "w4 w5"}
    assert odds[0] == pytest.approx(1.0 - 8.0)


def test_no_valid_span_means_no_answer():
    features = _features([(0, 0, 6, [0] * 6)])
    answers, odds = decode_spans(features, CONTEXT, _logits([(0, 4, 5, 3.0)]), "simple")
    assert answers == {0: ""} and odds[0] == np.inf


def test_v2_beam_candidates():
    features = _features([(0, 0, 6, [1] * 6)])
    outputs = V2_OUTPUTS
    answers, odds = decode_spans(features, CONTEXT, outputs, "v2")
    # (4, 3) ends before it starts; (4, 5) scores -1.4; (6, 8) scores -1.2.
    assert answers == {0: "w3 w4 w5"} and odds == {0: -2.5}
    # At most 2 tokens: (6, 7) at -1.3 beats (4, 5) at -1.4.
    answers, _ = decode_spans(features, CONTEXT, outputs, "v2", max_answer_length=2)
    assert answers == {0: "w3 w4"}


def test_span_adjusted_null_odds():
    features = _features([(0, 0, 6, [1] * 6)])
    outputs = V2_OUTPUTS
    answers, odds = decode_spans(
        features, CONTEXT, outputs, "v2", null_score="span_adjusted"
    )
    # The best span (6, 8) has log probability -1.2: -2.5 - (-1.2).
    assert answers == {0: "w3 w4 w5"} and odds == {0: pytest.approx(-1.3)}
    # The simple head's official odds already subtract the best span.
    logits = _logits([(0, 4, 5, 3.0)], null=(1.0, 0.5))
    for null_score in ("official", "span_adjusted"):
        _, odds = decode_spans(
            features, CONTEXT, logits, "simple", null_score=null_score
        )
        assert odds == {0: pytest.approx(1.5 - 6.0)}
    with pytest.raises(
        ValueError, match="Unknown null_score 'span'. Allowed: official"
    ):
        decode_spans(features, CONTEXT, outputs, "v2", null_score="span")
