"""From span logits to answer texts: n-best decoding and the no-answer score.

Two heads, two decoders, both as the official code does it:

- the simple start/end head (`AlbertSpanQA`, official SQuAD v1 / BERT v2):
  the `n_best_size` best starts and ends of every window, kept when both are
  context tokens, the start has its maximum context in this window, end >=
  start and the span has at most `max_answer_length` tokens; score = start +
  end logit; the no-answer score is the smallest `[CLS]` score
  (start[0] + end[0]) over the windows, and `null_odds` = that minus the best
  span's score.
- the v2 head (`AlbertSquadV2`, official `accumulate_predictions_v2`): the
  beam's start_n_top x end_n_top candidates with score = start + end log
  probability, the same validity rules; `null_odds` = the smallest
  `cls_logits` over the windows.

`null_score="span_adjusted"` gives the v2 head a no-answer score that also
weighs how sure the best span is: the smallest `cls_logits` minus the best
span's log probability. `cls_logits` are the log-odds of "no answer"; answering
earns F1 only if the question is answerable and the span right, so answer when
P(answerable) x P(span) > P(no answer), that is when `cls_logits` - log P(span)
is below a threshold (chosen on dev, as the official one). For the simple head
the official score already is the null score minus the best span's.

Answers are whole words of the context (the map kept by `squad_features`).
"""

from __future__ import annotations

import collections

import numpy as np

from albert_keras.models.albert_span_text_model import (  # noqa: F401
    NULL_SCORES,
    check_null_score,
)


def _span_text(context, doc_token_start, doc_token_end):
    tok_to_word, words = context
    first, last = tok_to_word[doc_token_start], tok_to_word[doc_token_end]
    return " ".join(words[first : last + 1])


def _candidates_simple(row, features, outputs, n_best_size):
    start_logits, end_logits = outputs["start_logits"][row], outputs["end_logits"][row]
    starts = np.argsort(-start_logits, kind="stable")[:n_best_size]
    ends = np.argsort(-end_logits, kind="stable")[:n_best_size]
    null = float(start_logits[0] + end_logits[0])
    pairs = [
        (s, e, float(start_logits[s] + end_logits[e])) for s in starts for e in ends
    ]
    return pairs, null


def _candidates_v2(row, features, outputs, n_best_size):
    start_index = outputs["start_top_index"][row]
    start_log = outputs["start_top_log_probs"][row]
    end_index = outputs["end_top_index"][row]
    end_log = outputs["end_top_log_probs"][row]
    k_start = len(start_index)
    k_end = len(end_index) // k_start
    pairs = []
    for i in range(k_start):
        for j in range(k_end):
            k = i * k_end + j
            pairs.append(
                (start_index[i], end_index[k], float(start_log[i] + end_log[k]))
            )
    return pairs, float(outputs["cls_logits"][row])


def decode_spans(
    features,
    contexts,
    outputs,
    head="v2",
    n_best_size=20,
    max_answer_length=30,
    null_score="official",
):
    """Best answer text and no-answer odds of every example.

    Args:
        features: the dict of `squad_features` (one row per window).
        contexts: its per-example (`tok_to_word`, `words`) maps.
        outputs: the model's outputs over those windows, numpy: for "simple"
            `start_logits`/`end_logits` [windows, length]; for "v2"
            `start_top_index`, `start_top_log_probs`, `end_top_index`,
            `end_top_log_probs`, `cls_logits`.
        head: "simple" or "v2".
        n_best_size: starts and ends kept per window ("simple").
        max_answer_length: longest answer in tokens.
        null_score: "official" or "span_adjusted" (v2: the smallest
            `cls_logits` minus the best span's log probability; for "simple"
            both are the official score).

    Returns:
        (answers, null_odds): dicts example index -> best non-empty answer
        ("" if no valid span) and -> no-answer score (higher = more likely
        unanswerable; answer "" where it exceeds a threshold chosen on dev).

    Example:
    >>> import numpy as np
    >>> features = {"example_index": np.array([0]), "doc_start": np.array([0]),
    ...     "doc_offset": np.array([3]), "doc_length": np.array([3]),
    ...     "token_is_max_context": np.array([[0, 0, 0, 1, 1, 1, 0]])}
    >>> contexts = [(np.array([0, 1, 2]), ["the", "red", "cat"])]
    >>> logits = {"start_logits": np.array([[0., 0, 0, 0, 5, 0, 0]]),
    ...     "end_logits": np.array([[1., 0, 0, 0, 0, 5, 0]])}
    >>> answers, odds = decode_spans(features, contexts, logits, head="simple")
    >>> answers[0], odds[0]
    ('red cat', -9.0)
    """
    candidates = {"simple": _candidates_simple, "v2": _candidates_v2}
    if head not in candidates:
        raise ValueError(f"Unknown head {head!r}. Allowed: simple, v2")
    check_null_score(null_score)
    best = {}
    null = {}
    rows = collections.defaultdict(list)
    for row, example in enumerate(features["example_index"]):
        rows[int(example)].append(row)
    for example, example_rows in rows.items():
        best_score, best_span = -np.inf, None
        for row in example_rows:
            offset = int(features["doc_offset"][row])
            length = int(features["doc_length"][row])
            max_context = features["token_is_max_context"][row]
            pairs, row_null = candidates[head](row, features, outputs, n_best_size)
            null[example] = min(null.get(example, np.inf), row_null)
            for start, end, score in pairs:
                if not (offset <= start < offset + length):
                    continue
                if not (offset <= end < offset + length) or end < start:
                    continue
                if end - start + 1 > max_answer_length or not max_context[start]:
                    continue
                if score > best_score:
                    doc_start = int(features["doc_start"][row]) - offset
                    best_score = score
                    best_span = (start + doc_start, end + doc_start)
        if best_span is None:
            best[example] = ""
            null[example] = np.inf
        else:
            best[example] = _span_text(contexts[example], *best_span)
            if head == "simple" or null_score == "span_adjusted":
                null[example] = null[example] - best_score
    return best, {k: float(v) for k, v in null.items()}


def answers_by_id(
    examples,
    features,
    contexts,
    outputs,
    head="v2",
    max_answer_length=30,
    null_score="official",
):
    """`decode_spans` keyed by question id, as SQuAD evaluation takes them.

    Args:
        examples: the questions (`read_squad_file`), in `features`' order.
        features, contexts: `squad_features` of those questions.
        outputs: the model's outputs over the windows (arrays or tensors).
        head, max_answer_length, null_score: as `decode_spans`.

    Returns:
        (answers, null_odds): dicts question id -> best non-empty answer ("" if
        no valid span) and -> no-answer score.
    """
    outputs = {k: np.asarray(v) for k, v in outputs.items()}
    answers, null_odds = decode_spans(
        features,
        contexts,
        outputs,
        head=head,
        max_answer_length=max_answer_length,
        null_score=null_score,
    )
    ids = [e["id"] for e in examples]
    return (
        {ids[i]: text for i, text in answers.items()},
        {ids[i]: value for i, value in null_odds.items()},
    )
