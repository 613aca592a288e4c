"""SQuAD v1.1 / v2.0 evaluation: EM and F1, HasAns/NoAns, the best null threshold.

The rules of the official SQuAD v2.0 evaluation script: answers are compared
after lowercasing and removing punctuation, the articles a/an/the and extra
whitespace; the score of a question is the maximum over its gold answers; an
unanswerable question's only gold answer is the empty string. Given no-answer
probabilities, the best threshold is the one that maximises the total score
when every question above it is answered with "".

One departure: where answering nothing scores best, the official script
reports the threshold 0.0, which answers every question whose odds are at or
below 0, and ALBERT's no-answer odds are logit differences, often negative.
Here that threshold is `ANSWER_NOTHING`, the lowest float32 (not -inf,
which strict JSON cannot hold), so that applying the reported threshold
(`na_prob_threshold`, or a text model's `null_threshold`) gives the reported
best score; the best scores themselves are the official ones.
"""

from __future__ import annotations

import collections
import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)
# The no-answer threshold that answers "" to every question (odds > it): the
# official script's 0.0 for probabilities, here for odds of any sign. The
# lowest float32, not -inf: metrics.json stays strict JSON, and Keras logs
# and a served model (float32 odds) hold it as it is.
ANSWER_NOTHING = -3.4028234663852886e38
_HIGHEST = -ANSWER_NOTHING


def finite_threshold(threshold: float) -> float:
    """`threshold` within the float32 range: -inf is `ANSWER_NOTHING`.

    The same answers for every float32 no-answer odds but that extreme
    itself (odds are float32 logit differences), and strict JSON.

    Args:
        threshold: a no-answer threshold (odds above it answer "").

    Example:
    >>> finite_threshold(float("-inf")) == ANSWER_NOTHING, finite_threshold(0.5)
    (True, 0.5)
    """
    return min(max(float(threshold), ANSWER_NOTHING), _HIGHEST)


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def f1(gold: str, prediction: str) -> float:
    """Token-overlap F1; for no-answer on either side, 1 if both are empty."""
    gold_tokens = normalize_answer(gold).split() if gold else []
    pred_tokens = normalize_answer(prediction).split() if prediction else []
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    common = sum(
        (collections.Counter(gold_tokens) & collections.Counter(pred_tokens)).values()
    )
    if common == 0:
        return 0.0
    precision = common / len(pred_tokens)
    recall = common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _questions(dataset):
    """(id, gold answers) of a SQuAD `data` list; [""] for unanswerable ones."""
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                golds = [
                    a["text"]
                    for a in qa.get("answers", [])
                    if isinstance(a, dict)
                    and isinstance(a.get("text"), str)
                    and normalize_answer(a["text"])
                ]
                yield qa["id"], golds or [""]


def _best_threshold(predictions, scores, na_probs, has_answer):
    # Start from answering nothing: every unanswerable question is right.
    # Walk the questions by rising no-answer probability, in `na_probs` order
    # for ties, as the official script does.
    score = best = sum(1 for qid in scores if not has_answer[qid])
    threshold = ANSWER_NOTHING  # (the official script says 0.0)
    for qid in sorted(na_probs, key=lambda q: na_probs[q]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            score += scores[qid]
        elif predictions[qid]:
            score -= 1
        if score > best:
            best, threshold = score, na_probs[qid]
    return 100.0 * best / len(scores), finite_threshold(threshold)


def squad_evaluate(dataset, predictions, na_probs=None, na_prob_threshold=1.0):
    """Scores predictions on a SQuAD v1.1 or v2.0 `data` list.

    Args:
        dataset: the `data` list of a SQuAD JSON file.
        predictions: dict question id -> predicted answer text ("" = no answer).
        na_probs: optional dict question id -> probability of no answer; then
            questions with a probability above `na_prob_threshold` count as
            answered "", and the best thresholds for EM and F1 are reported.
        na_prob_threshold: the threshold applied with `na_probs`.

    Returns:
        dict with `exact`, `f1`, `total`, `HasAns_*` and `NoAns_*` (when there
        are such questions), and with `na_probs` also `best_exact`,
        `best_exact_thresh`, `best_f1`, `best_f1_thresh` (`ANSWER_NOTHING`
        where answering nothing is best; always finite, so the result is
        strict JSON). Scores are percent.
        Questions without a prediction are counted in `missing` and skipped.

    Example:
    >>> data = [{"paragraphs": [{"qas": [
    ...     {"id": "q1", "answers": [{"text": "the Cat"}]},
    ...     {"id": "q2", "answers": []}]}]}]
    >>> squad_evaluate(data, {"q1": "cat", "q2": ""})["exact"]
    100.0
    """
    exact, f1s, has_answer = {}, {}, {}
    missing = 0
    for qid, golds in _questions(dataset):
        has_answer[qid] = golds != [""]
        if qid not in predictions:
            missing += 1
            continue
        prediction = predictions[qid]
        exact[qid] = max(exact_match(g, prediction) for g in golds)
        f1s[qid] = max(f1(g, prediction) for g in golds)
    if not exact:
        raise ValueError("No prediction matches a question id of the dataset.")
    if na_probs is not None:
        for scores in (exact, f1s):
            for qid in scores:
                if na_probs[qid] > na_prob_threshold:
                    scores[qid] = float(not has_answer[qid])

    def summary(ids):
        return {
            "exact": 100.0 * sum(exact[q] for q in ids) / len(ids),
            "f1": 100.0 * sum(f1s[q] for q in ids) / len(ids),
            "total": len(ids),
        }

    result = summary(list(exact))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        ids = [q for q in exact if has_answer[q] == wanted]
        if ids:
            result.update({f"{prefix}_{k}": v for k, v in summary(ids).items()})
    if na_probs is not None:
        raw_exact, raw_f1 = {}, {}
        for qid, golds in _questions(dataset):
            if qid in predictions:
                raw_exact[qid] = max(exact_match(g, predictions[qid]) for g in golds)
                raw_f1[qid] = max(f1(g, predictions[qid]) for g in golds)
        result["best_exact"], result["best_exact_thresh"] = _best_threshold(
            predictions, raw_exact, na_probs, has_answer
        )
        result["best_f1"], result["best_f1_thresh"] = _best_threshold(
            predictions, raw_f1, na_probs, has_answer
        )
    result["missing"] = missing
    return result
