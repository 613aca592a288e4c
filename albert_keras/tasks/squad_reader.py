"""SQuAD v1.1 / v2.0 JSON -> questions with word-level answer spans.

Each context is split into whitespace words (the official readers'
`doc_tokens`); an answer is kept as its first and last word. Bad questions
are skipped and counted in a `DataReport`: empty contexts or questions,
answers without text, training answers that do not occur in their context at
`answer_start` (the official code skips those with a warning). Read for
evaluation, a question skipped for an empty question or context stays among
the examples marked `skipped`, to be answered "" and scored (`answerable`).
"""

from __future__ import annotations

import json
import os

from albert_keras.tasks.data_report import DataReport
from albert_keras.tasks.jsonl_records import check_kept, check_text


def _is_whitespace(c):
    return c in " \t\r\n" or ord(c) == 0x202F


def split_words(context):
    """(words, char_to_word): whitespace words and each character's word index.

    The official SQuAD readers' `doc_tokens` / `char_to_word_offset`: a
    whitespace character belongs to the word before it.
    """
    words, char_to_word, previous_space = [], [], True
    for c in context:
        if _is_whitespace(c):
            previous_space = True
        else:
            if previous_space:
                words.append(c)
            else:
                words[-1] += c
            previous_space = False
        char_to_word.append(len(words) - 1)
    return words, char_to_word


def read_squad_file(path, training):
    """Questions of a SQuAD v1.1/v2.0 JSON file, with word-level answer spans.

    Each context is split into whitespace words (the official readers'
    `doc_tokens`); an answer is kept as its first and last word. A training
    answer whose words do not contain its text (a wrong `answer_start`) is
    skipped and counted, as the official code skips it with a warning.

    Args:
        path: SQuAD JSON (`{"data": [{"paragraphs": [{"context", "qas"}]}]}`).
        training: keep only the first answer of each question and check it.

    Returns:
        (examples, dataset, report): dicts with `id`, `question`, `words`,
        `answer_words` ((first, last) or None when unanswerable),
        `is_impossible` and `answers` (all gold texts), and, not
        `training`, `{"id", "line", "skipped": reason}` for each question
        with an empty question or context (counted skipped in the report;
        `answerable` leaves them out); the JSON `data` list (for
        `squad_evaluate`); a `DataReport`.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"SQuAD file {path!r} does not exist. Pass a SQuAD v1.1/v2.0 JSON file."
        )
    report = DataReport(path, unit="question")
    try:
        with open(path, encoding="utf-8-sig") as f:  # with or without a BOM
            dataset = json.load(f)["data"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise ValueError(
            f"{path!r} is not SQuAD JSON ({type(e).__name__}: {e}): expected "
            '{"data": [{"paragraphs": [{"context": ..., "qas": [...]}]}]}.'
        ) from None
    _check_structure(path, dataset)
    examples, number, ids = [], 0, {}
    for article in dataset:
        for paragraph in article.get("paragraphs", []):
            context = paragraph.get("context")
            empty = not isinstance(context, str) or not context.strip()
            words, char_to_word = ([], []) if empty else split_words(context)
            for qa in paragraph.get("qas", []):
                number += 1
                _check_id(qa, number, ids, report)
                example = (
                    "empty context"
                    if empty
                    else _squad_example(
                        qa, context, words, char_to_word, training, number
                    )
                )
                if isinstance(example, str):
                    report.skip(number, example)
                    if not training and _unreadable(example):
                        examples.append(
                            {"id": qa["id"], "line": number, "skipped": example}
                        )
                    continue
                examples.append(example)
                report.kept += 1
    check_kept(
        report,
        answerable(examples),
        "--task squad reads SQuAD JSON: data / paragraphs (context) / qas "
        "(question, id, answers)",
    )
    return examples, dataset, report


def _has_text(answer) -> bool:
    return isinstance(answer.get("text"), str) and bool(answer["text"])


def _unreadable(reason):
    """Whether a question skipped for `reason` has no text to be answered
    from (an empty question or context): such a question is kept, marked
    `skipped`, to be answered "" (see `answerable`)."""
    return reason == "empty context" or reason.startswith("question: ")


def answerable(examples):
    """The examples the model answers: all but those marked `skipped`.

    Reading an evaluation file (not `training`) keeps each question skipped
    for an empty question or context as `{"id", "line", "skipped": reason}`
    among the examples, so that a draw (`TaskData.subset`) draws among every
    question and the drawn ones are all answered and scored: a skipped one
    with "" (the official evaluation counts a missing answer as wrong, and
    scored without it, EM/F1 were over fewer questions than the file has).

    Example:
    >>> answerable([{"id": "a"}, {"id": "b", "skipped": "empty context"}])
    [{'id': 'a'}]
    """
    return [e for e in examples if "skipped" not in e]


def _check_structure(path, dataset):
    """Refuses SQuAD JSON whose nesting is not lists of objects (it failed
    with AttributeError / KeyError deep in reading or in the evaluation)."""
    level = [("data", dataset)]
    for child in ("paragraphs", "qas", None):
        below = []
        for where, value in level:
            if not isinstance(value, list):
                _not_squad(path, f"{where} is a {type(value).__name__}, not a list")
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    _not_squad(path, f"{where}[{i}] is a {type(item).__name__}")
                if child:
                    below.append((f"{where}[{i}].{child}", item.get(child, [])))
        level = below


def _not_squad(path, problem):
    raise ValueError(
        f"{path!r} is not SQuAD JSON ({problem}, where an object belongs): "
        'expected {"data": [{"paragraphs": [{"context": ..., "qas": [{"id": '
        '..., "question": ..., "answers": [...]}]}]}]}.'
    )


def _check_id(qa, number, ids, report):
    """Names a question without an id ("question-N", in the data read, so
    the evaluation sees it too); refuses an id used twice: answers and
    scores are kept by id, and one question's would replace the other's."""
    if not isinstance(qa, dict):
        return
    if qa.get("id") in (None, ""):
        qa["id"] = f"question-{number}"
        report.note(number, 'no id: named "question-N" (N its number)')
    qid = qa["id"]
    if qid in ids:
        raise ValueError(
            f"{report.path!r}: questions {ids[qid]} and {number} have the same "
            f"id {qid!r}. Answers and scores are kept by id, so one would "
            "replace the other: give each question its own id."
        )
    ids[qid] = number


def _squad_example(qa, context, words, char_to_word, training, number):
    question = qa.get("question")
    if check_text(question):
        return f"question: {check_text(question)}"
    answers = [a for a in qa.get("answers", []) if isinstance(a, dict)]
    impossible = bool(qa.get("is_impossible", False)) or not answers
    example = {
        "id": qa.get("id", ""),
        "question": question,
        "words": words,
        "answer_words": None,
        "is_impossible": impossible,
        "answers": [a["text"] for a in answers if _has_text(a)],
        "line": number,
    }
    if impossible:
        return example
    answer = answers[0]
    text, start = answer.get("text"), _answer_start(answer.get("answer_start"))
    if not isinstance(text, str) or not text or not isinstance(start, int):
        if training or not any(_has_text(a) for a in answers):
            if isinstance(text, str) and text and start is not None:
                return "answer_start not an integer (a character offset such as 4)"
            return "answer without text or answer_start"
        return example  # scored by its texts (no span is needed for that)
    end = start + len(text) - 1
    if start < 0 or end >= len(context) or context[start : end + 1] != text:
        if training:
            return "answer not found in the context at answer_start"
        return example
    first, last = char_to_word[start], char_to_word[end]
    if training and " ".join(text.split()) not in " ".join(words[first : last + 1]):
        return "answer not found in the context at answer_start"
    example["answer_words"] = (first, last)
    return example


def _answer_start(value):
    """An answer's `answer_start` as an int: digit strings ("4") count too.

    Args:
        value: the JSON value, or None where the key is missing.

    Returns:
        The offset as an int, None where missing, else the value unchanged
        (a float, a word, a bool), which the caller reports as not an integer.
    """
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    if isinstance(value, bool):
        return str(value)
    return value
