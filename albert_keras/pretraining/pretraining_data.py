"""`create_pretraining_data`: text files -> sharded official pretraining TFRecords.

What the official `create_pretraining_data.py` does, seeded, batched and in
parallel: documents (`read_documents`) are tokenized a batch of lines at a
time (`CorpusTokenizer`), cut into SOP (or NSP) segment pairs
(`SegmentPairer`), masked with whole-word n-grams (`NgramMasker`),
serialized (`ExampleEncoder`) with the official features and written
(`TFRecordWriter`), `dupe_factor` times with fresh pairs and masks. The
records parse with the official `run_pretraining.input_fn_builder` and its
files parse with ours.

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

import contextlib
import glob
import os
import struct
import sys
import time
from collections import Counter

import numpy as np

from albert_keras.pretraining.example_encoder import FEATURE_ORDER, ExampleEncoder
from albert_keras.pretraining.ngram_masker import NgramMasker
from albert_keras.pretraining.segment_pairer import SegmentPairer
from albert_keras.pretraining.text_documents import read_documents
from albert_keras.pretraining.tfrecord_writer import TFRecordWriter

_BLOCK = 2048  # instances masked and encoded at a time


def expand_inputs(input_files) -> list[str]:
    """Files matching each path or glob, in the order given (sorted per glob).

    Args:
        input_files: a path or glob, or a list of them.

    Example:
    >>> expand_inputs(["corpus/*.txt", "extra.txt"])  # doctest: +SKIP
    ['corpus/a.txt', 'corpus/b.txt', 'extra.txt']
    """
    patterns = [input_files] if isinstance(input_files, str) else list(input_files)
    if not patterns:
        raise ValueError("No input files given. Pass text files or glob patterns.")
    paths = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern)) or (
            [pattern] if os.path.exists(pattern) else []
        )
        if not matched:
            raise ValueError(
                f"No input file matches {pattern!r}. Check the path; quote globs "
                "such as 'corpus/*.txt' so the shell does not expand them."
            )
        paths.extend(matched)
    return paths


def output_paths(output: str, num_shards: int) -> list[str]:
    """Shard paths for `output`, a folder or a prefix.

    `DIR/part-00000-of-00004.tfrecord` for a folder (existing or ending in a
    separator), else `PREFIX-00000-of-00004.tfrecord`; a single shard named
    `*.tfrecord` is written to exactly that path.

    Args:
        output: folder, prefix or (one shard) file name.
        num_shards: how many files.

    Example:
    >>> output_paths("data/wiki", 2)
    ['data/wiki-00000-of-00002.tfrecord', 'data/wiki-00001-of-00002.tfrecord']
    >>> output_paths("data/train.tfrecord", 1)
    ['data/train.tfrecord']
    """
    if num_shards == 1 and output.endswith((".tfrecord", ".tfrecords")):
        return [output]
    if os.path.isdir(output) or output.endswith(("/", os.sep)):
        prefix = os.path.join(output, "part")
    else:
        prefix = output
    return [f"{prefix}-{i:05d}-of-{num_shards:05d}.tfrecord" for i in range(num_shards)]


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


def _write_file_instances(job, progress=None):
    """Pairs, masks and writes the instances of one tokenized input file.

    With `path` None the feature arrays are returned instead (in the order
    they would be written): `(stats, arrays)`.
    """
    index, ids, segment_lengths, document_starts, path, options = job
    rng = np.random.default_rng([options["seed"], index])
    word_starts = options["word_starts"]
    pairer = SegmentPairer(
        options["max_seq_length"],
        options["short_seq_prob"],
        options["random_next_sentence"],
        word_starts,
    )
    masker = NgramMasker(
        len(word_starts),
        word_starts,
        masked_lm_prob=options["masked_lm_prob"],
        max_predictions_per_seq=options["max_predictions_per_seq"],
        ngram=options["ngram"],
        do_whole_word_mask=options["do_whole_word_mask"],
        mask_id=options["mask_id"],
        cls_id=options["cls_id"],
        sep_id=options["sep_id"],
    )
    encoder = ExampleEncoder()
    stats = Counter()
    span_words = np.zeros(options["ngram"] + 1, np.int64)
    blocks = []
    with contextlib.nullcontext() if path is None else TFRecordWriter(path) as writer:
        for _ in range(options["dupe_factor"]):
            spans, labels, skipped = pairer.pairs(
                ids, segment_lengths, document_starts, rng
            )
            stats["skipped_segments"] += skipped
            order = rng.permutation(len(spans))
            for start in range(0, len(order), _BLOCK):
                chosen = order[start : start + _BLOCK]
                features, lengths, spans_n = _build_features(
                    ids,
                    spans[chosen],
                    labels[chosen],
                    masker,
                    options["cls_id"],
                    options["sep_id"],
                    options["max_seq_length"],
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
    if path is None:
        arrays = None
        if blocks:
            arrays = {k: np.concatenate([b[k] for b in blocks]) for k in FEATURE_ORDER}
        return stats, arrays
    return stats


def _file_stats(result):
    """The stats of `_write_file_instances`'s result (with or without arrays)."""
    return result[0] if isinstance(result, tuple) else result


def _merge_shards(temp_paths, outputs):
    """Deals the records of the per-file temporary TFRecords round-robin to shards.

    TFRecord frames (length, its CRC, data, its CRC) are copied as they are.
    """
    if len(temp_paths) == 1 and len(outputs) == 1:
        os.replace(temp_paths[0], outputs[0])
        return
    writers = [open(p, "wb") for p in outputs]
    try:
        count = 0
        for path in temp_paths:
            with open(path, "rb") as f:
                while True:
                    header = f.read(12)
                    if not header:
                        break
                    (length,) = struct.unpack("<Q", header[:8])
                    writers[count % len(writers)].write(header + f.read(length + 4))
                    count += 1
            os.remove(path)
    finally:
        for w in writers:
            w.close()


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
    tokenizer=None,
    lowercase: bool = True,
    max_seq_length: int = 512,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    short_seq_prob: float = 0.1,
    dupe_factor: int = 1,
    ngram: int = 3,
    do_whole_word_mask: bool = True,
    random_next_sentence: bool = False,
    split_sentences: bool = False,
    seed: int = 12345,
    num_shards: int | None = None,
    num_workers: int = 1,
    verbose: bool = True,
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
        tokenizer: instead of `vocab`, a `SentencePieceEncoder`, an
            `AlbertTokenizer` or `AlbertWordPieceTokenizer` layer (these
            two in `tf.data`), or a `CorpusTokenizer` (it
            runs in this process; workers only pair, mask and write).
        lowercase: the official `do_lower_case` (True for the released
            English models).
        max_seq_length: pieces per instance (512 in the paper).
        max_predictions_per_seq: masked positions per instance at most.
        masked_lm_prob: share of pieces to mask (0.15); 0 writes unmasked
            records for `dynamic_masking`.
        short_seq_prob: share of documents with a random shorter target (0.1).
        dupe_factor: passes over the data, each with new pairs and masks (the
            official default is 40; or write once with `masked_lm_prob=0` and
            mask in `tf.data`).
        ngram: longest masked span in words; p(n) proportional to 1/n.
        do_whole_word_mask: mask whole words (official default True).
        random_next_sentence: NSP pairs (B from another document half the
            time, label 1) instead of sentence order (label 1 = swapped).
        split_sentences: cut each line into sentences (for text with a
            paragraph per line).
        seed: the same seed, inputs and `num_shards` write the same bytes.
        num_shards: output files (default: one per input file).
        num_workers: processes masking and writing, one input file each at
            a time, and threads tokenizing.
        verbose: print a progress line.

    Returns:
        dict: `instances`, `documents`, `segments`, `tokens` (real pieces,
        specials included), `masked`, `masked_fraction`, `label_0`/`label_1`,
        `ngram_lengths` ({n: masked spans of n words}), `skipped_segments`
        (one-piece segments that could not be paired), `empty_files`,
        `bytes` of input, `seconds`, `instances_per_second`, `mb_per_second`
        and `files` (the shards).

    Raises:
        ValueError: bad arguments, unreadable or non-UTF-8 input, a
            vocabulary that is not one, or no instance at all.

    Example:
    >>> stats = create_pretraining_data(
    ...     ["corpus/*.txt"], "data/", max_seq_length=128)  # doctest: +SKIP
    >>> stats["masked_fraction"]  # doctest: +SKIP
    0.149
    """
    # Its parameters, as given, are those of `_create_instances`.
    stats, _ = _create_instances(**locals())
    return stats


def create_pretraining_arrays(
    input_files, vocab: str | None = None, **options
) -> tuple[dict, dict]:
    """The instances `create_pretraining_data` writes, as NumPy arrays.

    For training without TensorFlow (JAX or PyTorch): the same pairs, masks
    and seeds, in the order a single shard would hold them (input file by
    input file), with no serialization in between. `input_files`, `vocab`
    and the keyword arguments (`**options`) are those of
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
    if "output" in options or "num_shards" in options:
        raise TypeError(
            "create_pretraining_arrays writes no files: drop `output` and "
            "`num_shards` (create_pretraining_data writes TFRecords)."
        )
    stats, features = _create_instances(input_files, None, vocab, **options)
    return features, stats


def _create_instances(
    input_files,
    output: str | None,
    vocab: str | None = None,
    *,
    tokenizer=None,
    lowercase: bool = True,
    max_seq_length: int = 512,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    short_seq_prob: float = 0.1,
    dupe_factor: int = 1,
    ngram: int = 3,
    do_whole_word_mask: bool = True,
    random_next_sentence: bool = False,
    split_sentences: bool = False,
    seed: int = 12345,
    num_shards: int | None = None,
    num_workers: int = 1,
    verbose: bool = True,
) -> tuple[dict, dict | None]:
    """`create_pretraining_data`'s work: records in `output`, or arrays if None."""
    start_time = time.perf_counter()
    for name, value in (
        ("dupe_factor", dupe_factor),
        ("num_workers", num_workers),
        ("num_shards", 1 if num_shards is None else num_shards),
    ):
        if int(value) < 1:
            raise ValueError(f"`{name}` must be at least 1. Received: {name}={value}")
    # Argument checks of the parts, before any work.
    SegmentPairer(max_seq_length, short_seq_prob, random_next_sentence)
    NgramMasker(
        1,
        masked_lm_prob=masked_lm_prob,
        max_predictions_per_seq=max_predictions_per_seq,
        ngram=ngram,
    )
    paths = expand_inputs(input_files)
    outputs = None
    if output is not None:
        outputs = output_paths(output, num_shards or len(paths))
        os.makedirs(os.path.dirname(os.path.abspath(outputs[0])), exist_ok=True)

    from albert_keras.pretraining.corpus_tokenizer import CorpusTokenizer

    if isinstance(tokenizer, CorpusTokenizer):
        corpus_tokenizer = tokenizer
    else:
        corpus_tokenizer = CorpusTokenizer(
            vocab, lowercase, tokenizer=tokenizer, num_threads=num_workers
        )
    options = dict(
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        short_seq_prob=short_seq_prob,
        dupe_factor=dupe_factor,
        ngram=ngram,
        do_whole_word_mask=do_whole_word_mask,
        random_next_sentence=random_next_sentence,
        seed=seed,
        word_starts=corpus_tokenizer.word_starts,
        cls_id=corpus_tokenizer.cls_id,
        sep_id=corpus_tokenizer.sep_id,
        mask_id=corpus_tokenizer.mask_id,
    )
    sizes = [os.path.getsize(p) if os.path.isfile(p) else 0 for p in paths]
    progress = _Progress(sum(sizes) * (1 + dupe_factor), verbose)
    totals = Counter()
    temp_paths, results = [], []
    pool = None
    if num_workers > 1 and len(paths) > 1:
        import multiprocessing

        # Spawned, not forked: the parent may run TensorFlow threads.
        pool = multiprocessing.get_context("spawn").Pool(num_workers)
    try:
        for index, (path, size) in enumerate(zip(paths, sizes, strict=True)):
            documents = read_documents(path, split_sentences)
            if not documents:
                totals["empty_files"] += 1
            ids, segment_lengths, document_starts = tokenize_segments(
                documents, corpus_tokenizer
            )
            totals["documents"] += len(document_starts) - 1
            totals["segments"] += len(segment_lengths)
            progress.update(size)
            temp = None
            if outputs is not None:
                temp = f"{outputs[0]}.tmp-{os.getpid()}-{index:05d}"
                temp_paths.append(temp)
            job = (index, ids, segment_lengths, document_starts, temp, options)
            if pool is None:
                results.append(
                    _write_file_instances(job, lambda n, s=size: progress.update(s, n))
                )
            else:
                results.append(
                    pool.apply_async(
                        _write_file_instances,
                        (job,),
                        callback=lambda r, s=size: progress.update(
                            s * dupe_factor, _file_stats(r).get("instances", 0)
                        ),
                    )
                )
        if pool is not None:
            results = [r.get() for r in results]
        span_words = np.zeros(ngram + 1, np.int64)
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
            _merge_shards(temp_paths, outputs)
    finally:
        progress.close()
        if pool is not None:
            pool.terminate()
        for temp in temp_paths:
            if os.path.exists(temp):
                os.remove(temp)
    seconds = time.perf_counter() - start_time
    stats = {
        key: int(totals[key])
        for key in (
            "instances",
            "documents",
            "segments",
            "tokens",
            "masked",
            "label_0",
            "label_1",
            "skipped_segments",
            "empty_files",
        )
    }
    stats["masked_fraction"] = stats["masked"] / max(stats["tokens"], 1)
    stats["ngram_lengths"] = NgramMasker.histogram(span_words)
    stats["bytes"] = int(sum(sizes))
    stats["seconds"] = seconds
    stats["instances_per_second"] = stats["instances"] / seconds
    stats["mb_per_second"] = stats["bytes"] / 1e6 / seconds
    if outputs is None:
        features = {k: np.concatenate([a[k] for a in arrays]) for k in FEATURE_ORDER}
        return stats, features
    stats["files"] = outputs
    return stats, None


def format_stats(stats: dict) -> str:
    """A short human summary of `create_pretraining_data`'s stats.

    Args:
        stats: the dict `create_pretraining_data` returns.

    Example:
    >>> print(format_stats(create_pretraining_data(["c.txt"], "d/")))  # doctest: +SKIP
    """
    lengths = stats["ngram_lengths"]
    total = sum(lengths.values()) or 1
    shares = ", ".join(f"{n}: {c / total:.3f}" for n, c in lengths.items())
    return (
        f"{stats['instances']} instances from {stats['documents']} documents "
        f"({stats['bytes'] / 1e6:.1f} MB) in {stats['seconds']:.1f} s "
        f"({stats['instances_per_second']:.0f} instances/s, "
        f"{stats['mb_per_second']:.2f} MB/s) -> {len(stats['files'])} shard(s)\n"
        f"masked {stats['masked_fraction']:.4f} of {stats['tokens']} pieces; "
        f"n-gram spans {shares}; labels 0/1: {stats['label_0']}/{stats['label_1']}"
        + (
            f"; skipped {stats['skipped_segments']} one-piece segments"
            if stats["skipped_segments"]
            else ""
        )
    )
