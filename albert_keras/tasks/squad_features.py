"""SQuAD examples -> windowed features with answer positions, and a `tf.data` of them.

Contexts are tokenized word by word (whitespace words, the official
`doc_tokens`), which keeps a map from every token to its word: predicted
token spans map back to text exactly. SentencePiece never lets a piece cross
whitespace, so the word-by-word ids equal the whole context's. Windows come
from `AlbertSpanPacker` (the official `convert_examples_to_features`:
`max_query_length`, `doc_stride`, `_check_is_max_context`).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_keras.tasks.task_datasets import epoch_batches, tokenize_texts
from albert_keras.tokenizers.albert_span_packer import AlbertSpanPacker
from albert_keras.tokenizers.word_pieces import space_piece_id

MODEL_KEYS = ("token_ids", "segment_ids", "padding_mask", "p_mask")
LABEL_KEYS = ("start_positions", "end_positions", "is_impossible")


def _context_tokens(tokenizer, examples):
    """Per distinct context: (ids, token -> word index, word -> first token,
    word -> first answer token).

    A word whose first piece is SentencePiece's bare "▁" (as "▁", "60")
    starts an answer at its second piece: the official character alignment
    gives "▁" to the space before the word.
    """
    space = space_piece_id(tokenizer)
    cache, contexts = {}, []
    for example in examples:
        key = id(example["words"])
        if key not in cache:
            cache[key] = len(contexts)
            contexts.append(example["words"])
    flat_words = [w for words in contexts for w in words]
    pieces = tokenize_texts(tokenizer, flat_words)
    values = pieces.flat_values.numpy()
    counts = pieces.row_lengths().numpy()
    result, word, token = [], 0, 0
    for words in contexts:
        n = len(words)
        word_counts = counts[word : word + n]
        total = int(word_counts.sum())
        ids = values[token : token + total]
        tok_to_word = np.repeat(np.arange(n, dtype="int32"), word_counts)
        word_to_tok = np.concatenate([[0], np.cumsum(word_counts)]).astype("int32")
        answer_start = word_to_tok[:-1].copy()
        if space is not None and total:
            first_piece = ids[np.minimum(answer_start, total - 1)]
            answer_start += (first_piece == space) & (word_counts > 1)
        result.append((ids, tok_to_word, word_to_tok, answer_start))
        word += n
        token += total
    return [result[cache[id(e["words"])]] for e in examples]


def squad_features(
    examples,
    tokenizer,
    sequence_length=384,
    doc_stride=128,
    max_query_length=64,
    report=None,
):
    """Windows of (question, context) with their answer positions.

    Args:
        examples: from `read_squad_file`, less those marked `skipped`
            (`answerable`).
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length, doc_stride, max_query_length: as the official
            `run_squad` flags (384, 128, 64).
        report: a `DataReport`; counts contexts that need several windows.

    Returns:
        (features, contexts): `features` a dict of numpy arrays, one row per
        window: the model inputs (`MODEL_KEYS`), the official labels
        (`start_positions`/`end_positions`: the answer's tokens in the window,
        0 = `[CLS]` when the question is unanswerable or the answer is not
        inside this window; `is_impossible` likewise), and what decoding
        needs (`token_is_max_context`, `example_index`, `doc_start`,
        `doc_offset`, `doc_length`); `contexts` per example the
        (`tok_to_word`, `words`) map back to text.
    """
    packer = AlbertSpanPacker.for_tokenizer(
        tokenizer,
        sequence_length,
        doc_stride=doc_stride,
        max_query_length=max_query_length,
    )
    context_tokens = _context_tokens(tokenizer, examples)
    questions = tokenize_texts(tokenizer, [e["question"] for e in examples])
    contexts = tf.ragged.constant([c[0] for c in context_tokens], dtype=tf.int32)
    parts = []
    for start in range(0, len(examples), 512):
        part = packer(questions[start : start + 512], contexts[start : start + 512])
        part = {k: v.numpy() for k, v in part.items()}
        part["example_index"] = part["example_index"] + start
        parts.append(part)
    features = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    # Context tokens of each window: segment 1 without the closing [SEP].
    features["doc_length"] = (features["segment_ids"].sum(axis=1) - 1).astype("int32")
    starts, ends, impossible = _labels(examples, context_tokens, features)
    features["start_positions"] = starts
    features["end_positions"] = ends
    features["is_impossible"] = impossible
    if report is not None:
        windows = np.bincount(features["example_index"], minlength=len(examples))
        for example, count in zip(examples, windows, strict=True):
            if count > 1:
                report.note(example["line"], "context split into several windows")
    maps = [(c[1], e["words"]) for c, e in zip(context_tokens, examples, strict=True)]
    return features, maps


def _labels(examples, context_tokens, features):
    n = len(features["example_index"])
    starts = np.zeros(n, "int32")
    ends = np.zeros(n, "int32")
    impossible = np.ones(n, "int32")
    for row in range(n):
        index = features["example_index"][row]
        example = examples[index]
        if example["is_impossible"] or example["answer_words"] is None:
            continue
        first, last = example["answer_words"]
        _, _, word_to_tok, answer_start = context_tokens[index]
        token_start, token_end = answer_start[first], word_to_tok[last + 1] - 1
        doc_start = features["doc_start"][row]
        if token_end < token_start:  # words with no token: nothing to point at
            continue
        if (
            token_start >= doc_start
            and token_end < doc_start + features["doc_length"][row]
        ):
            offset = features["doc_offset"][row] - doc_start
            starts[row], ends[row] = token_start + offset, token_end + offset
            impossible[row] = 0
    return starts, ends, impossible


def keep_null_windows(features, fraction, seed=0):
    """Drops a share of the training windows whose answer is `[CLS]`.

    With windows shorter than the contexts, most training windows hold no
    answer (an unanswerable question, or an answer outside the window), and
    the model learns "no answer" first. Keeping every window with an answer
    and a seeded `fraction` of the others balances the data and shortens the
    epochs, as the BERT baseline for Natural Questions does with its null
    windows (Alberti et al., 2019). The null threshold is chosen on dev, so
    the shifted prior of the answer-class head is corrected there. Use it for
    training features only.

    Args:
        features: the dict `squad_features` returns.
        fraction: share of null windows to keep, in (0, 1]; 1 keeps all
            (the official behaviour).
        seed: which null windows are kept.

    Returns:
        The same dict with the rows kept, in their original order.

    Example:
    >>> import numpy as np
    >>> f = {"start_positions": np.array([0, 5, 0, 0]), "x": np.arange(4)}
    >>> keep_null_windows(f, 0.5, seed=1)["start_positions"].tolist().count(5)
    1
    """
    if not 0.0 < fraction <= 1.0:
        raise ValueError(
            "`fraction` (the share of null windows to keep) must be in (0, 1]. "
            f"Received: fraction={fraction}"
        )
    if fraction == 1.0:
        return features
    null = features["start_positions"] == 0
    rng = np.random.default_rng(seed)
    keep = ~null | (rng.random(len(null)) < fraction)
    return {k: v[keep] for k, v in features.items()}


def squad_dataset(features, batch_size, training=False, seed=0, head="v2", epochs=None):
    """(inputs, targets) batches of `squad_features` output for `fit`/`predict`.

    Args:
        features: the dict `squad_features` returns.
        batch_size: windows per batch.
        training: shuffle, and add `start_positions` to the inputs (the v2
            head conditions its end logits on the gold start).
        seed: shuffle seed.
        epochs: training only: the epochs, back to back (see
            `epoch_batches`).
        head: "v2" (`AlbertSquadV2`: targets `start_log_probs`,
            `end_log_probs`, `cls_logits`) or "simple" (`AlbertSpanQA`:
            targets `start_logits`, `end_logits`).
    """
    inputs = {k: features[k] for k in MODEL_KEYS}
    if head == "v2":
        inputs["start_positions"] = features["start_positions"]
        targets = {
            "start_log_probs": features["start_positions"],
            "end_log_probs": features["end_positions"],
            "cls_logits": features["is_impossible"].astype("float32"),
        }
    elif head == "simple":
        targets = {
            "start_logits": features["start_positions"],
            "end_logits": features["end_positions"],
        }
    else:
        raise ValueError(f"Unknown head {head!r}. Allowed: v2, simple")
    dataset = tf.data.Dataset.from_tensor_slices((inputs, targets))
    dataset = epoch_batches(
        dataset, lambda d: d.batch(batch_size), training, seed, epochs
    )
    return dataset.prefetch(tf.data.AUTOTUNE)
