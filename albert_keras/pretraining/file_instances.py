"""`file_instances`: one tokenized input file -> its pretraining instances.

The per-file work of `create_pretraining_data`: pair the segments
(`SegmentPairer`), mask them (`NgramMasker`) and write the serialized
examples (`ExampleEncoder`, `TFRecordWriter`), `dupe_factor` times, with
draws from `numpy.random.default_rng([seed, file index])` only. Run in this
process or in a worker (a `FileJob` pickles).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter

import numpy as np

from albert_keras.pretraining.example_encoder import FEATURE_ORDER, ExampleEncoder
from albert_keras.pretraining.ngram_masker import NgramMasker
from albert_keras.pretraining.pretraining_data_options import PretrainingDataOptions
from albert_keras.pretraining.segment_pairer import SegmentPairer
from albert_keras.pretraining.tfrecord_writer import TFRecordWriter

_BLOCK = 2048  # instances masked and encoded at a time


def tokenize_segments(documents, corpus_tokenizer):
    """Documents -> the `SegmentPairer` inputs: pieces, segment lengths, starts.

    Args:
        documents: list of documents, each a list of segments (`read_documents`).
        corpus_tokenizer: a `CorpusTokenizer`.

    Returns:
        `(ids, segment_lengths, document_starts)`: the pieces of all segments
        back to back, the pieces per segment (segments without pieces dropped,
        as the official code drops such lines), and the first segment of each
        document then the number of segments (documents left empty dropped).
    """
    lines = [line for doc in documents for line in doc]
    ids, line_lengths = corpus_tokenizer.encode(lines)
    doc_of_line = np.repeat(np.arange(len(documents)), [len(d) for d in documents])
    kept = line_lengths > 0
    document_starts = np.searchsorted(
        doc_of_line[kept], np.arange(len(documents) + 1), "left"
    )
    return ids, line_lengths[kept], np.unique(document_starts)


@dataclasses.dataclass(frozen=True)
class FileJob:
    """One input file's work: its tokens, where to write, and how.

    Args:
        index: the file's place in the inputs (it seeds the file's draws).
        ids, segment_lengths, document_starts: `tokenize_segments`' result.
        path: the TFRecord file to write, or None to return arrays.
        options: the run's options (without a tokenizer, so a job pickles).
        word_starts: per vocabulary id, whether the piece starts a word.
        cls_id, sep_id, mask_id: the special ids of the vocabulary.
    """

    index: int
    ids: np.ndarray
    segment_lengths: np.ndarray
    document_starts: np.ndarray
    path: str | None
    options: PretrainingDataOptions
    word_starts: np.ndarray
    cls_id: int
    sep_id: int
    mask_id: int


def _build_features(ids, spans, labels, masker, cls_id, sep_id, max_seq_length, rng):
    """`[CLS] a [SEP] b [SEP]` rows from token spans, masked: the feature arrays."""
    a_start, a_end, b_start, b_end = (spans[:, k, None] for k in range(4))
    a_len, b_len = a_end - a_start, b_end - b_start
    lengths = (a_len + b_len + 3)[:, 0]
    col = np.arange(max_seq_length)[None, :]
    in_a = (col >= 1) & (col <= a_len)
    in_b = (col >= a_len + 2) & (col < a_len + 2 + b_len)
    source = np.where(
        in_a, a_start + col - 1, np.where(in_b, b_start + col - a_len - 2, 0)
    )
    rows = np.where(in_a | in_b, ids[source], 0).astype(np.int32)
    index = np.arange(len(spans))
    rows[:, 0] = cls_id
    rows[index, a_len[:, 0] + 1] = sep_id
    rows[index, lengths - 1] = sep_id
    valid = col < lengths[:, None]
    features = masker.mask(rows, lengths, rng)
    span_words = features.pop("span_words")
    features["input_mask"] = valid.astype(np.int32)
    features["segment_ids"] = (valid & (col >= a_len + 2)).astype(np.int32)
    features["token_boundary"] = masker.token_boundary(rows, lengths)
    features["next_sentence_labels"] = labels
    return features, lengths, span_words


def _parts(job: FileJob):
    """The job's `SegmentPairer` and `NgramMasker`."""
    options = job.options
    pairer = SegmentPairer(
        options.max_seq_length,
        options.short_seq_prob,
        options.random_next_sentence,
        job.word_starts,
    )
    masker = NgramMasker(
        len(job.word_starts),
        job.word_starts,
        masked_lm_prob=options.masked_lm_prob,
        max_predictions_per_seq=options.max_predictions_per_seq,
        ngram=options.ngram,
        do_whole_word_mask=options.do_whole_word_mask,
        mask_id=job.mask_id,
        cls_id=job.cls_id,
        sep_id=job.sep_id,
    )
    return pairer, masker


def file_instances(job: FileJob, progress=None):
    """Pairs, masks and writes the instances of one tokenized input file.

    Args:
        job: the file's `FileJob`.
        progress: called with the number of pairs after each pass.

    Returns: the file's stats (a dict of counts and `span_words`); with
    `job.path` None, `(stats, arrays)`: the feature arrays in the order they
    would be written (None for no instance).
    """
    options = job.options
    rng = np.random.default_rng([options.seed, job.index])
    pairer, masker = _parts(job)
    encoder = ExampleEncoder()
    stats = Counter()
    span_words = np.zeros(options.ngram + 1, np.int64)
    blocks = []
    with (
        contextlib.nullcontext() if job.path is None else TFRecordWriter(job.path)
    ) as writer:
        for _ in range(options.dupe_factor):
            spans, labels, skipped = pairer.pairs(
                job.ids, job.segment_lengths, job.document_starts, rng
            )
            stats["skipped_segments"] += skipped
            stats["pieces"] += len(job.ids)  # the text's, to compare with tokens
            order = rng.permutation(len(spans))
            for start in range(0, len(order), _BLOCK):
                chosen = order[start : start + _BLOCK]
                features, lengths, spans_n = _build_features(
                    job.ids,
                    spans[chosen],
                    labels[chosen],
                    masker,
                    job.cls_id,
                    job.sep_id,
                    options.max_seq_length,
                    rng,
                )
                if writer is None:
                    blocks.append(features)
                else:
                    writer.write_batch(encoder.encode(features))
                span_words += spans_n
                stats["instances"] += len(chosen)
                stats["tokens"] += int(lengths.sum())
                stats["masked"] += int(features["masked_lm_weights"].sum())
                stats["label_1"] += int(features["next_sentence_labels"].sum())
            if progress is not None:
                progress(len(spans))
    stats["label_0"] = stats["instances"] - stats["label_1"]
    stats = dict(stats)
    stats["span_words"] = span_words
    if job.path is None:
        arrays = None
        if blocks:
            arrays = {k: np.concatenate([b[k] for b in blocks]) for k in FEATURE_ORDER}
        return stats, arrays
    return stats


def file_stats(result):
    """The stats of `file_instances`'s result (with or without arrays)."""
    return result[0] if isinstance(result, tuple) else result
