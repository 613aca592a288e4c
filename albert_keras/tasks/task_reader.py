"""Reading fine-tuning data: JSON Lines task files and SQuAD JSON, with a report.

Record layouts (one JSON object per line; SQuAD is one JSON document):

| task | keys |
|---|---|
| `classify` | `text` (or `sentence`), `label` (int or string) |
| `pair` | `text_a`, `text_b` (or `premise`/`hypothesis`, ...), `label` |
| `regress` | `text` or `text_a` [+ `text_b`], `label` (a number) |
| `choice` | `context` [+ `question`], `options` (list of strings), `label` (index) |
| `squad` | SQuAD v1.1 / v2.0 JSON (`data` -> `paragraphs` -> `qas`) |

Bad records are skipped and counted in a `DataReport`, never an exception in
the middle of a run: malformed JSON, missing or non-string texts, empty
texts, labels outside the label set (taken from the training file), a wrong
number of options, SQuAD answers that do not occur in their context.
"""

from __future__ import annotations

import json
import math
import os

from albert_keras.tasks.data_report import DataReport

TASKS = ("classify", "pair", "regress", "choice", "squad")
_TEXT_KEYS = ("text", "sentence", "text_a")
_PAIR_KEYS = (
    ("text_a", "text_b"),
    ("premise", "hypothesis"),
    ("sentence1", "sentence2"),
    ("question", "sentence"),
)


def _open_lines(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"Task file {path!r} does not exist. Pass the path of a JSON Lines file "
            "(one example per line)."
        )
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}): task files are JSON Lines "
            "in UTF-8."
        ) from None
    return text.splitlines()


def _label_key(value):
    return (type(value).__name__, value)


def _texts(record, task):
    """(text_a, text_b) or the reason the record has none."""
    if task == "pair":
        for a, b in _PAIR_KEYS:
            if a in record and b in record:
                return record[a], record[b]
        keys = " / ".join(f"{a}+{b}" for a, b in _PAIR_KEYS)
        return f"no text pair ({keys})"
    for key in _TEXT_KEYS:
        if key in record:
            text_b = record.get("text_b") if task == "regress" else None
            return record[key], text_b
    return f"no text ({' / '.join(_TEXT_KEYS)})"


def _check_text(text, optional=False):
    if text is None and optional:
        return None
    if not isinstance(text, str):
        return "text is not a string"
    if not text.strip():
        return "empty text"
    return None


def read_task_file(path, task, label_names=None, num_choices=None, require_labels=True):
    """Examples of a JSON Lines task file, and what was skipped.

    Args:
        path: the `.jsonl` file.
        task: "classify", "pair", "regress" or "choice" (SQuAD files: use
            `read_squad_file`).
        label_names: the label set of a classification task, in class-index
            order (from the training file's `label_names`); None reads the
            training file and takes its distinct labels, sorted.
        num_choices: options per example for "choice"; None takes the first
            record's count.
        require_labels: skip records without a `label` (training and dev);
            False keeps them with `label` None (files to predict on). A label
            that is there is checked either way.

    Returns:
        (examples, label_names, report): a list of dicts with `text_a`,
        `text_b` (None for single texts) and `label` (class index or float),
        or for "choice" `context`, `options` and `label`; the label set (None
        for regression; the option count for "choice"); a `DataReport`.

    Example:
    >>> import json, tempfile
    >>> path = tempfile.mktemp(suffix=".jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"text": "good", "label": 1}\\n{"text": "bad", "label": 0}\\n')
    >>> examples, labels, report = read_task_file(path, "classify")
    >>> labels, examples[0]["label"], report.kept
    ([0, 1], 1, 2)
    """
    if task not in TASKS or task == "squad":
        raise ValueError(
            f"Unknown task for a JSON Lines file. Received: task={task!r}. Allowed: "
            "classify, pair, regress, choice (read SQuAD JSON with read_squad_file)"
        )
    report = DataReport(path)
    records = []
    for number, line in enumerate(_open_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            report.skip(number, "malformed JSON")
            continue
        if not isinstance(record, dict):
            report.skip(number, "not a JSON object")
            continue
        if "label" not in record:
            if require_labels:
                report.skip(number, "no label")
                continue
            record = dict(record, label=None)
        records.append((number, record))
    if task == "choice":
        examples, num_choices = _choice_examples(
            records, report, num_choices, require_labels
        )
        _check_kept(report, examples)
        return examples, num_choices, report
    if task in ("classify", "pair") and label_names is None:
        labels = {
            _label_key(r["label"]): r["label"]
            for _, r in records
            if isinstance(r["label"], (int, str)) and not isinstance(r["label"], bool)
        }
        label_names = [labels[k] for k in sorted(labels)]
    index = {_label_key(v): i for i, v in enumerate(label_names or [])}
    examples = []
    for number, record in records:
        texts = _texts(record, task)
        if isinstance(texts, str):
            report.skip(number, texts)
            continue
        problem = _check_text(texts[0]) or _check_text(texts[1], optional=True)
        if problem:
            report.skip(number, problem)
            continue
        label = record["label"]
        if label is None and not require_labels:
            pass
        elif task == "regress":
            if isinstance(label, bool) or not isinstance(label, (int, float)):
                report.skip(number, "label is not a number")
                continue
            if not math.isfinite(label):
                report.skip(number, "label is not finite")
                continue
            label = float(label)
        else:
            key = _label_key(label) if isinstance(label, (int, str)) else None
            if key not in index:
                report.skip(number, "label outside the label set")
                continue
            label = index[key]
        examples.append(
            {"text_a": texts[0], "text_b": texts[1], "label": label, "line": number}
        )
        report.kept += 1
    _check_kept(report, examples)
    return examples, (None if task == "regress" else label_names), report


def _choice_examples(records, report, num_choices, require_labels=True):
    examples = []
    for number, record in records:
        context, options = record.get("context"), record.get("options")
        if "question" in record and isinstance(record["question"], str):
            context = f"{context} {record['question']}" if context else None
        problem = _check_text(context)
        if problem:
            report.skip(number, f"context: {problem}")
            continue
        if not isinstance(options, list) or not options:
            report.skip(number, "no options list")
            continue
        if any(_check_text(o) for o in options):
            report.skip(number, "an option is empty or not a string")
            continue
        if num_choices is None:
            num_choices = len(options)
        if len(options) != num_choices:
            report.skip(number, f"not {num_choices} options")
            continue
        label = record["label"]
        if label is None and not require_labels:
            pass
        elif (
            isinstance(label, bool)
            or not isinstance(label, int)
            or not 0 <= label < num_choices
        ):
            report.skip(number, "label is not an option index")
            continue
        examples.append(
            {"context": context, "options": options, "label": label, "line": number}
        )
        report.kept += 1
    return examples, num_choices


def _check_kept(report, examples):
    if not examples:
        raise ValueError(
            f"{report.summary()}. No usable example in {report.path!r}: check the "
            "task (--task) and the record keys (see albert_keras/tasks/"
            "task_reader.py)."
        )


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
        `is_impossible` and `answers` (all gold texts); the JSON `data` list
        (for `squad_evaluate`); a `DataReport`.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"SQuAD file {path!r} does not exist. Pass a SQuAD v1.1/v2.0 JSON file."
        )
    report = DataReport(path)
    try:
        with open(path, encoding="utf-8") as f:
            dataset = json.load(f)["data"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise ValueError(
            f"{path!r} is not SQuAD JSON ({type(e).__name__}: {e}): expected "
            '{"data": [{"paragraphs": [{"context": ..., "qas": [...]}]}]}.'
        ) from None
    examples, number = [], 0
    for article in dataset:
        for paragraph in article.get("paragraphs", []):
            context = paragraph.get("context")
            if not isinstance(context, str) or not context.strip():
                for _ in paragraph.get("qas", []):
                    number += 1
                    report.skip(number, "empty context")
                continue
            words, char_to_word = split_words(context)
            for qa in paragraph.get("qas", []):
                number += 1
                example = _squad_example(
                    qa, context, words, char_to_word, training, number
                )
                if isinstance(example, str):
                    report.skip(number, example)
                    continue
                examples.append(example)
                report.kept += 1
    _check_kept(report, examples)
    return examples, dataset, report


def _squad_example(qa, context, words, char_to_word, training, number):
    question = qa.get("question")
    if _check_text(question):
        return f"question: {_check_text(question)}"
    answers = [a for a in qa.get("answers", []) if isinstance(a, dict)]
    impossible = bool(qa.get("is_impossible", False)) or not answers
    example = {
        "id": qa.get("id", ""),
        "question": question,
        "words": words,
        "answer_words": None,
        "is_impossible": impossible,
        "answers": [a.get("text", "") for a in answers],
        "line": number,
    }
    if impossible:
        return example
    answer = answers[0]
    text, start = answer.get("text"), answer.get("answer_start")
    if not isinstance(text, str) or not text or not isinstance(start, int):
        return "answer without text or answer_start"
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
