"""`create_pretraining_data`: text files -> sharded official pretraining TFRecords.

What the official `create_pretraining_data.py` does, seeded, batched and in
parallel: documents (`read_documents`) are tokenized a batch of lines at a
time (`CorpusTokenizer`), cut into SOP (or NSP) segment pairs
(`SegmentPairer`), masked with whole-word n-grams (`NgramMasker`),
serialized (`ExampleEncoder`) with the official features and written
(`TFRecordWriter`), `dupe_factor` times with fresh pairs and masks
(`file_instances`, per input file). The settings are a
`PretrainingDataOptions`; its fields are also the keywords of the functions
here. The records parse with the official `run_pretraining.input_fn_builder`
and its files parse with ours.

With a SentencePiece vocabulary nothing here imports TensorFlow or Keras
(loading them takes longer than the whole job on a corpus of a few
megabytes); a WordPiece vocabulary, or a TensorFlow tokenizer layer passed
in, tokenizes in `tf.data`.

Every draw of input file `i` comes from `numpy.random.default_rng([seed, i])`,
so the same inputs, seed and shard count give the same bytes with any number
of workers. Each file's pairs are drawn from its own documents (an NSP
"random next" segment comes from another document of the same file), and its
instances are shuffled within each pass; the instances of all files are then
dealt round-robin to the output shards, as the official writer deals them
to its output files. `create_pretraining_arrays` returns the same instances
as NumPy arrays instead (training on JAX or PyTorch without TensorFlow).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections import Counter

import numpy as np

from albert_keras.atomic_files import make_folder, remove_empty_folders
from albert_keras.pretraining.example_encoder import FEATURE_ORDER
from albert_keras.pretraining.file_instances import (
    FileJob,
    file_instances,
    file_stats,
    tokenize_segments,
)
from albert_keras.pretraining.ngram_masker import NgramMasker
from albert_keras.pretraining.pretraining_data_options import PretrainingDataOptions
from albert_keras.pretraining.shard_files import merge_shards, output_paths
from albert_keras.pretraining.text_documents import read_documents
from albert_keras.tokenizers.vocabulary import input_paths


class _Progress:
    """A one-line progress report: rewritten in place on a terminal, else every 10%."""

    def __init__(self, total, enabled):
        self.total, self.done, self.enabled = max(total, 1e-9), 0.0, enabled
        self.start, self.instances, self.shown = time.perf_counter(), 0, -1
        self.tty = enabled and sys.stdout.isatty()

    def update(self, amount, instances=0):
        self.done += amount
        self.instances += instances
        if not self.enabled:
            return
        share = min(self.done / self.total, 1.0)
        tenth = int(share * 10)
        if not self.tty and tenth == self.shown:
            return
        self.shown = tenth
        seconds = time.perf_counter() - self.start
        line = (
            f"create-data: {100 * share:3.0f}% | {self.instances} instances | "
            f"{seconds:.0f} s"
        )
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n")
        sys.stdout.flush()

    def close(self):
        if self.tty:
            print()


def create_pretraining_data(
    input_files,
    output: str,
    vocab: str | None = None,
    *,
    options: PretrainingDataOptions | None = None,
    **keywords,
) -> dict:
    """Writes official ALBERT pretraining TFRecords from text files; returns stats.

    Args:
        input_files: paths or glob patterns of UTF-8 text files: one segment
            (sentence or paragraph) per line, a blank line between documents.
        output: a folder (existing, or ending in "/") for
            `part-00000-of-0000N.tfrecord` shards, or a prefix for
            `PREFIX-00000-of-0000N.tfrecord` (or, with one shard, a path
            ending in `.tfrecord`).
        vocab: SentencePiece `.model` or WordPiece `vocab.txt`; default the
            embedded `austen-8k.model`.
        options: a `PretrainingDataOptions` (default: its defaults).
        **keywords: fields of `PretrainingDataOptions` (`tokenizer`,
            `lowercase`, `max_seq_length`, `max_predictions_per_seq`,
            `masked_lm_prob`, `short_seq_prob`, `dupe_factor`, `ngram`,
            `do_whole_word_mask`, `random_next_sentence`, `split_sentences`,
            `seed`, `num_shards`, `num_workers`, `verbose`), set in
            `options` (or the defaults); see there.

    Returns:
        dict: `instances`, `documents`, `segments`, `tokens` (real pieces,
        specials included), `masked`, `masked_fraction`, `label_0`/`label_1`,
        `ngram_lengths` ({n: masked spans of n words}), `skipped_segments`
        (one-piece segments that could not be paired), `empty_files`,
        `pieces` (of the text, per pass) and `unknown` (those of them the
        vocabulary does not know), `bytes` of input, `seconds`,
        `instances_per_second`, `mb_per_second`
        and `files` (the shards).

    Raises:
        ValueError: bad arguments, unreadable or non-UTF-8 input, a
            vocabulary that is not one, or no instance at all.
        TypeError: a keyword that is not an option.

    Example:
    >>> stats = create_pretraining_data(
    ...     ["corpus/*.txt"], "data/", max_seq_length=128)  # doctest: +SKIP
    >>> stats["masked_fraction"]  # doctest: +SKIP
    0.149
    """
    options = PretrainingDataOptions.from_keywords(keywords, options)
    stats, _ = _create_instances(input_files, output, vocab, options)
    return stats


def create_pretraining_arrays(
    input_files,
    vocab: str | None = None,
    *,
    options: PretrainingDataOptions | None = None,
    **keywords,
) -> tuple[dict, dict]:
    """The instances `create_pretraining_data` writes, as NumPy arrays.

    For training without TensorFlow (JAX or PyTorch): the same pairs, masks
    and seeds, in the order a single shard would hold them (input file by
    input file), with no serialization in between. `input_files`, `vocab`,
    `options` and the keyword arguments are those of
    `create_pretraining_data` (no `output`, `num_shards`); `num_workers`
    processes take an input file each, so split a large corpus into files to
    use them.

    Returns:
        `(features, stats)`: `features` maps each official feature name
        (`input_ids`, `input_mask`, `segment_ids`, `token_boundary`,
        `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights`,
        `next_sentence_labels`) to an array with one row per instance (int32;
        `masked_lm_weights` float32); `stats` as `create_pretraining_data`
        returns them, without `files`.

    Example:
    >>> features, stats = create_pretraining_arrays(
    ...     ["corpus/*.txt"], max_seq_length=128, dupe_factor=8)  # doctest: +SKIP
    >>> features["input_ids"].shape  # doctest: +SKIP
    (112847, 128)
    """
    if "output" in keywords or "num_shards" in keywords:
        raise TypeError(
            "create_pretraining_arrays writes no files: drop `output` and "
            "`num_shards` (create_pretraining_data writes TFRecords)."
        )
    options = PretrainingDataOptions.from_keywords(
        keywords, options, caller="create_pretraining_arrays"
    )
    stats, features = _create_instances(input_files, None, vocab, options)
    return features, stats


def _create_instances(
    input_files, output: str | None, vocab: str | None, options
) -> tuple[dict, dict | None]:
    """`create_pretraining_data`'s work: records in `output`, or arrays if None."""
    start_time = time.perf_counter()
    paths = input_paths(input_files)
    outputs, made, done = None, [], False
    if output is not None:
        outputs = output_paths(output, options.num_shards or len(paths))
        made = make_folder(os.path.dirname(os.path.abspath(outputs[0])), output)
    corpus_tokenizer = _corpus_tokenizer(vocab, options)
    sizes = [os.path.getsize(p) if os.path.isfile(p) else 0 for p in paths]
    progress = _Progress(sum(sizes) * (1 + options.dupe_factor), options.verbose)
    totals = Counter()
    temp_paths = []
    try:
        results = _run_files(
            paths,
            sizes,
            outputs,
            temp_paths,
            corpus_tokenizer,
            options,
            progress,
            totals,
        )
        span_words = np.zeros(options.ngram + 1, np.int64)
        arrays = []
        for result in results:
            if outputs is None:
                result, file_arrays = result
                if file_arrays is not None:
                    arrays.append(file_arrays)
            span_words += result.pop("span_words")
            totals.update(result)
        if totals["instances"] == 0:
            raise ValueError(
                f"No training instance from {paths}: the corpus is empty, or no "
                "document has two pieces of text. Documents are runs of non-empty "
                "lines separated by blank lines."
            )
        if outputs is not None:
            merge_shards(temp_paths, outputs)
        done = True
    finally:
        progress.close()
        for temp in temp_paths:
            if os.path.exists(temp):
                os.remove(temp)
        if not done:  # refused or failed: no empty output folder left behind
            remove_empty_folders(made)
    stats = _stats(totals, span_words, sum(sizes), time.perf_counter() - start_time)
    if outputs is None:
        features = {k: np.concatenate([a[k] for a in arrays]) for k in FEATURE_ORDER}
        return stats, features
    stats["files"] = outputs
    return stats, None


def _corpus_tokenizer(vocab, options):
    """`options.tokenizer` if it is a `CorpusTokenizer`, else one for it or `vocab`."""
    from albert_keras.pretraining.corpus_tokenizer import CorpusTokenizer

    if isinstance(options.tokenizer, CorpusTokenizer):
        return options.tokenizer
    return CorpusTokenizer(
        vocab,
        options.lowercase,
        tokenizer=options.tokenizer,
        num_threads=options.num_workers,
    )


def _run_files(
    paths, sizes, outputs, temp_paths, corpus_tokenizer, options, progress, totals
):
    """Reads and tokenizes each input file here, and makes its instances here
    or in a worker process; returns the `file_instances` results in input
    order. Counts documents, segments and empty files in `totals`, and adds
    each temporary file to `temp_paths` as it is assigned."""
    job_options = dataclasses.replace(options, tokenizer=None)
    pool = None
    if options.num_workers > 1 and len(paths) > 1:
        import multiprocessing

        # Spawned, not forked: the parent may run TensorFlow threads.
        pool = multiprocessing.get_context("spawn").Pool(options.num_workers)
    results = []
    try:
        for index, (path, size) in enumerate(zip(paths, sizes, strict=True)):
            documents = read_documents(path, options.split_sentences)
            if not documents:
                totals["empty_files"] += 1
            ids, segment_lengths, document_starts = tokenize_segments(
                documents, corpus_tokenizer
            )
            totals["documents"] += len(document_starts) - 1
            # Per pass, as `pieces`: a vocabulary that does not fit is warned of.
            unknown = int(np.count_nonzero(ids == corpus_tokenizer.unk_id))
            totals["unknown"] += unknown * options.dupe_factor
            totals["segments"] += len(segment_lengths)
            progress.update(size)
            temp = None
            if outputs is not None:
                # Hidden, as a shard's own temporary: a killed run leaves
                # none that a `--records 'out/*'` glob (`record_files`) reads.
                folder, name = os.path.split(outputs[0])
                temp = os.path.join(folder, f".{name}.tmp-{os.getpid()}-{index:05d}")
                temp_paths.append(temp)
            job = FileJob(
                index,
                ids,
                segment_lengths,
                document_starts,
                temp,
                job_options,
                corpus_tokenizer.word_starts,
                corpus_tokenizer.cls_id,
                corpus_tokenizer.sep_id,
                corpus_tokenizer.mask_id,
            )
            if pool is None:
                results.append(
                    file_instances(job, lambda n, s=size: progress.update(s, n))
                )
            else:
                results.append(
                    pool.apply_async(
                        file_instances,
                        (job,),
                        callback=lambda r, s=size: progress.update(
                            s * options.dupe_factor, file_stats(r).get("instances", 0)
                        ),
                    )
                )
        if pool is not None:
            results = [r.get() for r in results]
    finally:
        if pool is not None:
            pool.terminate()
    return results


def _stats(totals, span_words, input_bytes, seconds) -> dict:
    """`create_pretraining_data`'s stats (without `files`) from the totals."""
    keys = "instances documents segments tokens masked label_0 label_1 "
    keys += "skipped_segments empty_files pieces unknown"
    stats = {key: int(totals[key]) for key in keys.split()}
    stats["masked_fraction"] = stats["masked"] / max(stats["tokens"], 1)
    stats["ngram_lengths"] = NgramMasker.histogram(span_words)
    stats["bytes"] = int(input_bytes)
    stats["seconds"] = seconds
    stats["instances_per_second"] = stats["instances"] / seconds
    stats["mb_per_second"] = stats["bytes"] / 1e6 / seconds
    return stats


def format_stats(stats: dict) -> str:
    """A short human summary of `create_pretraining_data`'s stats.

    Args:
        stats: the dict `create_pretraining_data` (or, without its shard
            count, `create_pretraining_arrays`) returns.

    Example:
    >>> print(format_stats(create_pretraining_data(["c.txt"], "d/")))  # doctest: +SKIP
    """
    lengths = stats["ngram_lengths"]
    total = sum(lengths.values()) or 1
    shares = ", ".join(f"{n}: {c / total:.3f}" for n, c in lengths.items())
    return (
        f"{_count(stats['instances'], 'instance')} from "
        f"{_count(stats['documents'], 'document')} "
        f"({stats['bytes'] / 1e6:.1f} MB) in {stats['seconds']:.1f} s "
        f"({stats['instances_per_second']:.0f} instances/s, "
        f"{stats['mb_per_second']:.2f} MB/s)"
        + (f" -> {len(stats['files'])} shard(s)" if "files" in stats else "")
        + "\n"
        + f"masked {stats['masked_fraction']:.4f} of {stats['tokens']} pieces; "
        f"n-gram spans {shares}; labels 0/1: {stats['label_0']}/{stats['label_1']}"
        + (
            f"; skipped {stats['skipped_segments']} one-piece segments"
            if stats["skipped_segments"]
            else ""
        )
        + _text_warnings(stats)
    )


def _count(number: int, noun: str) -> str:
    """ "1 instance", "2 instances" (it said "1 instances from 1 documents")."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _text_warnings(stats: dict) -> str:
    """Lines when the instances hold under a quarter of the text's pieces
    (lines far longer than --max-seq-length are cut short; paragraphs a line
    at 64 pieces keep about half, as the official script), or when over 2% of
    them are unknown to the vocabulary."""
    pieces, lines = stats.get("pieces"), ""
    used = stats["tokens"] - 3 * stats["instances"]  # less [CLS] and two [SEP]
    if pieces and used < 0.25 * pieces:
        lines += (
            f"\nwarning: the instances hold {100 * used / pieces:.2g}% of the text's "
            f"{pieces} pieces: a line longer than --max-seq-length is cut to fit "
            "one instance. Put a sentence or paragraph on each line, or pass "
            "--split-sentences to cut lines into sentences."
        )
    if pieces and stats.get("unknown", 0) > 0.02 * pieces:
        lines += (
            f"\nwarning: {100 * stats['unknown'] / pieces:.2g}% of the text's pieces "
            "are unknown to the vocabulary (<unk>/[UNK]): it does not fit this text "
            "(another language or script, or another --lowercase). Train one on "
            "it: pretrain --vocab-size N, or albert-keras vocab (--kind wordpiece "
            "for Chinese)."
        )
    return lines
