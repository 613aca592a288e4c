"""Pretraining data: documents -> SOP segment pairs with n-gram masking -> TFRecords.

The algorithm of the official `create_pretraining_data.py`, seeded: each
document is cut into chunks of about `max_seq_length - 3` tokens at segment
(line) boundaries, a chunk is split into A and B at a random segment, and for
sentence-order prediction A and B are swapped with probability 0.5 (label 1);
a chunk of a single segment is cut in two at a word start (the official code
would pair it with another document, an NSP example inside SOP data);
with `random_next_sentence` B comes from another document instead (NSP, for
the paper's Table 5 comparison). 10% of the chunks get a random shorter
target length. Masking picks n-grams of whole words with p(n) proportional to
1/n (n <= 3) until 15% of the tokens (at most `max_predictions_per_seq`) are
chosen; 80% become [MASK], 10% a random token, 10% stay. The records hold the
official features, so files written by either program are interchangeable.

All randomness comes from a NumPy generator seeded from `seed` and the input
file's index (the official n-gram draw is unseeded), so the same seed writes
the same bytes.
"""

from __future__ import annotations

import glob
import os
import re
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import numpy as np

_PUNCTUATION = set("!\"#$%&'()*+,-./:;?@[\\]^_`{|}~")
_ENGLISH = set("abcdefghijklmnopqrstuvwxyz")


def is_word_start(piece: str) -> bool:
    """Official `_is_start_piece_sp`: a piece that begins a word for masking."""
    return (
        piece.startswith(("\u2581", "<"))
        or piece in _PUNCTUATION
        or not all(c.lower() in _ENGLISH or c in _PUNCTUATION for c in piece)
    )


_SENTENCE_END = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMs\.)(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])"
)


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of an English paragraph (ends at . ! ? before a capital)."""
    return [s for s in _SENTENCE_END.split(paragraph) if s.strip()]


def read_documents(path: str, sentences: bool = False) -> list[list[str]]:
    """Documents of a text file: one segment per line, blank lines between.

    With `sentences`, each line (a paragraph) is split into sentences, so that
    segment pairs can be cut inside long paragraphs (the official input has a
    sentence per line).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ValueError(f"Cannot read {path!r}: {e.strerror}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path!r} is not UTF-8 text (byte {e.start}). Convert it, e.g. "
            "`iconv -f latin1 -t utf-8`."
        ) from None
    documents, current = [], []
    for line in text.splitlines():
        line = line.strip()
        if line:
            current.extend(split_sentences(line) if sentences else [line])
        elif current:
            documents.append(current)
            current = []
    if current:
        documents.append(current)
    return documents


def _truncate_pair(a, b, max_tokens, rng):
    while len(a) + len(b) > max_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def mask_ngrams(
    pieces, ids, rng, *, masked_lm_prob, max_predictions, vocab_size, mask_id, ngram=3
):
    """Whole-word n-gram masking; returns (ids, positions, labels, span_words).

    `span_words` lists the number of words of each masked span (its n).
    """
    words = []
    for i, piece in enumerate(pieces):
        if piece in ("[CLS]", "[SEP]"):
            continue
        if words and not is_word_start(piece):
            words[-1].append(i)
        else:
            words.append([i])
    return mask_words(
        words,
        ids,
        len(pieces),
        rng,
        masked_lm_prob=masked_lm_prob,
        max_predictions=max_predictions,
        vocab_size=vocab_size,
        mask_id=mask_id,
        ngram=ngram,
    )


def mask_words(
    words,
    ids,
    length,
    rng,
    *,
    masked_lm_prob,
    max_predictions,
    vocab_size,
    mask_id,
    ngram=3,
):
    """`mask_ngrams` on words given as position lists (e.g. from `token_boundary`)."""
    if masked_lm_prob == 0:  # unmasked data, for dynamic masking later
        return list(ids), [], [], []
    num_to_predict = min(max_predictions, max(1, int(round(length * masked_lm_prob))))
    pvals = 1.0 / np.arange(1, ngram + 1)
    pvals /= pvals.sum()
    starts = rng.permutation(len(words))
    output = list(ids)
    covered, chosen, spans = set(), [], []
    for start in starts:
        if len(chosen) >= num_to_predict:
            break
        longest = min(ngram, len(words) - start)
        n = rng.choice(
            np.arange(1, longest + 1), p=pvals[:longest] / pvals[:longest].sum()
        )
        span = [i for w in words[start : start + n] for i in w]
        while len(chosen) + len(span) > num_to_predict and n > 1:
            n -= 1
            span = [i for w in words[start : start + n] for i in w]
        if len(chosen) + len(span) > num_to_predict or covered.intersection(span):
            continue
        spans.append(int(n))
        for index in span:
            covered.add(index)
            chosen.append(index)
            if rng.random() < 0.8:
                output[index] = mask_id
            elif rng.random() >= 0.5:
                output[index] = int(rng.integers(0, vocab_size))
    chosen.sort()
    return output, chosen, [ids[i] for i in chosen], spans


def create_instances(
    documents, rng, *, max_seq_length, short_seq_prob, random_next_sentence
):
    """Segment pairs of tokenized documents: (a, b, label) with pieces and ids.

    `documents` is a list of documents, each a list of (pieces, ids) segments.
    """
    max_tokens = max_seq_length - 3
    instances = []
    for doc_index, document in enumerate(documents):
        target = max_tokens
        if rng.random() < short_seq_prob:
            target = int(rng.integers(2, max_tokens + 1))
        chunk, length, i = [], 0, 0
        while i < len(document):
            chunk.append(document[i])
            length += len(document[i][0])
            if i == len(document) - 1 or length >= target:
                a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
                a = [t for seg in chunk[:a_end] for t in zip(*seg, strict=True)]
                b = [t for seg in chunk[a_end:] for t in zip(*seg, strict=True)]
                label = 0
                if len(chunk) == 1 and not random_next_sentence and len(a) >= 2:
                    # SOP needs two consecutive segments of one document. The
                    # official code pairs a lone segment with a random other
                    # document (labelled 1, an NSP example inside SOP data);
                    # we cut the segment in two at a word start instead.
                    starts = [k for k in range(1, len(a)) if is_word_start(a[k][0])]
                    cut = (
                        starts[int(rng.integers(0, len(starts)))]
                        if starts
                        else len(a) // 2
                    )
                    a, b = a[:cut], a[cut:]
                    if rng.random() < 0.5:
                        a, b, label = b, a, 1
                elif len(chunk) == 1 or (random_next_sentence and rng.random() < 0.5):
                    if len(documents) < 2:
                        chunk, length, i = [], 0, i + 1
                        continue
                    other = doc_index
                    while other == doc_index:
                        other = int(rng.integers(0, len(documents)))
                    segments = documents[other]
                    b = []
                    for seg in segments[int(rng.integers(0, len(segments))) :]:
                        b.extend(zip(*seg, strict=True))
                        if len(b) >= target - len(a):
                            break
                    i -= len(chunk) - a_end  # put the unused segments back
                    label = 1
                elif not random_next_sentence and rng.random() < 0.5:
                    a, b, label = b, a, 1  # sentence-order prediction: swapped
                _truncate_pair(a, b, max_tokens, rng)
                if a and b:
                    instances.append((a, b, label))
                chunk, length = [], 0
            i += 1
    return instances


def _feature_ints(values):
    import tensorflow as tf

    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _serialize(a, b, label, rng, options):
    import tensorflow as tf

    pieces = ["[CLS]"] + [p for p, _ in a] + ["[SEP]"] + [p for p, _ in b] + ["[SEP]"]
    ids = [options["cls_id"]] + [t for _, t in a] + [options["sep_id"]]
    ids += [t for _, t in b] + [options["sep_id"]]
    segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    boundary = [1 if p in ("[CLS]", "[SEP]") or is_word_start(p) else 0 for p in pieces]
    masked, positions, labels, spans = mask_ngrams(
        pieces,
        ids,
        rng,
        masked_lm_prob=options["masked_lm_prob"],
        max_predictions=options["max_predictions_per_seq"],
        vocab_size=options["vocab_size"],
        mask_id=options["mask_id"],
        ngram=options["ngram"],
    )
    length, predictions = options["max_seq_length"], options["max_predictions_per_seq"]
    pad = length - len(ids)
    pad_p = predictions - len(positions)
    features = {
        "input_ids": _feature_ints(masked + [0] * pad),
        "input_mask": _feature_ints([1] * len(ids) + [0] * pad),
        "segment_ids": _feature_ints(segments + [0] * pad),
        "token_boundary": _feature_ints(boundary + [0] * pad),
        "masked_lm_positions": _feature_ints(positions + [0] * pad_p),
        "masked_lm_ids": _feature_ints(labels + [0] * pad_p),
        "masked_lm_weights": tf.train.Feature(
            float_list=tf.train.FloatList(value=[1.0] * len(positions) + [0.0] * pad_p)
        ),
        "next_sentence_labels": _feature_ints([label]),
    }
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString(), positions, ids, spans


def _process_file(job):
    """Tokenize, pair, mask and write one input file (runs in a worker)."""
    import tensorflow as tf

    from albert_keras.pretraining.sentencepiece_text import SentencePieceText

    index, path, output, options = job
    rng = np.random.default_rng([options["seed"], index])
    text = SentencePieceText(options["vocab"], lower=options["lower"])
    options = dict(
        options,
        vocab_size=text.vocab_size,
        cls_id=text.cls_id,
        sep_id=text.sep_id,
        mask_id=text.mask_id,
    )
    documents = read_documents(path, options["split_sentences"])
    flat = [seg for doc in documents for seg in doc]
    encoded = iter(text.encode(flat))
    tokenized = [[next(encoded) for _ in doc] for doc in documents]
    tokenized = [[seg for seg in doc if seg[0]] for doc in tokenized]
    tokenized = [doc for doc in tokenized if doc]
    stats = Counter()
    ngram_lengths = Counter()
    with tf.io.TFRecordWriter(output) as writer:
        for _ in range(options["dupe_factor"]):
            order = rng.permutation(len(tokenized))
            shuffled = [tokenized[i] for i in order]
            for a, b, label in create_instances(
                shuffled,
                rng,
                max_seq_length=options["max_seq_length"],
                short_seq_prob=options["short_seq_prob"],
                random_next_sentence=options["random_next_sentence"],
            ):
                record, positions, ids, spans = _serialize(a, b, label, rng, options)
                writer.write(record)
                stats["instances"] += 1
                stats["tokens"] += len(ids)
                stats["masked"] += len(positions)
                stats[f"label_{label}"] += 1
                ngram_lengths.update(spans)
    stats["documents"] = len(tokenized)
    stats["bytes"] = os.path.getsize(path)
    return dict(stats), dict(ngram_lengths)


def create_pretraining_data(
    input_files,
    output_dir: str,
    vocab: str | None = None,
    *,
    lower: bool = True,
    max_seq_length: int = 512,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    short_seq_prob: float = 0.1,
    dupe_factor: int = 1,
    ngram: int = 3,
    random_next_sentence: bool = False,
    split_sentences: bool = False,
    seed: int = 12345,
    num_workers: int = 1,
    verbose: bool = True,
) -> dict:
    """Writes one TFRecord shard per input file into `output_dir`; returns stats.

    Args:
        input_files: paths or glob patterns of text files (one segment per
            line, a blank line between documents).
        output_dir: where `*.tfrecord` shards go.
        vocab: SentencePiece `.model` (default: the embedded 8k model).
        lower: lowercase (the released English models do).
        max_seq_length, max_predictions_per_seq, masked_lm_prob,
            short_seq_prob, dupe_factor, ngram, random_next_sentence: as the
            official flags.
        split_sentences: split each line into sentences (for corpora with a
            paragraph per line, like the embedded one).
        seed: the same seed writes the same bytes.
        num_workers: processes, one input file each at a time.

    Returns:
        dict: instances, documents, tokens, masked, label counts, the
        histogram `ngram_lengths` of masked spans by their number of words,
        seconds, and the `files` written.

    Example:
    >>> stats = create_pretraining_data(["corpus.txt"], "data/")  # doctest: +SKIP
    """
    from albert_keras.sample_text import SPM_MODEL_PATH

    if max_seq_length < 5:
        raise ValueError(
            f"`max_seq_length` must be at least 5 ([CLS] a [SEP] b [SEP]). "
            f"Received: max_seq_length={max_seq_length}"
        )
    paths = []
    for pattern in [input_files] if isinstance(input_files, str) else input_files:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise ValueError(f"No input file matches {pattern!r}.")
        paths.extend(matched)
    os.makedirs(output_dir, exist_ok=True)
    options = dict(
        vocab=vocab or SPM_MODEL_PATH,
        lower=lower,
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        short_seq_prob=short_seq_prob,
        dupe_factor=dupe_factor,
        ngram=ngram,
        random_next_sentence=random_next_sentence,
        split_sentences=split_sentences,
        seed=seed,
    )
    jobs = []
    for index, path in enumerate(paths):
        name = os.path.splitext(os.path.basename(path))[0]
        jobs.append(
            (
                index,
                path,
                os.path.join(output_dir, f"{index:03d}-{name}.tfrecord"),
                options,
            )
        )
    start = time.perf_counter()
    totals, lengths = Counter(), Counter()
    if num_workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(num_workers) as pool:
            results = list(pool.map(_process_file, jobs))
    else:
        results = []
        for job in jobs:
            results.append(_process_file(job))
            if verbose:
                print(
                    f"  {job[1]}: {results[-1][0].get('instances', 0)} instances",
                    flush=True,
                )
    for stats, ngrams in results:
        totals.update(stats)
        lengths.update(ngrams)
    if totals["instances"] == 0:
        raise ValueError(
            f"No training instance from {paths}: the corpus is empty, or no document "
            "has text. Documents are runs of non-empty lines separated by blank lines."
        )
    result = dict(totals)
    result["ngram_lengths"] = {int(k): v for k, v in sorted(lengths.items())}
    result["seconds"] = time.perf_counter() - start
    result["files"] = [job[2] for job in jobs]
    return result
