"""Tokenizer throughput: the in-graph AlbertTokenizer vs the official one and others.

Lines/s on about 10 MB of real English (the shared corpora; the embedded
Austen corpus when they are absent), all with the same SentencePiece model:

- ours: `AlbertTokenizer` in a batched `tf.data` pipeline (the official
  `preprocess_text`, SentencePiece and the digit-comma rule, in the graph);
- official: `albert.tokenization` (albert-tensorflow 1.1) as run_classifier
  calls it, line by line: `preprocess_text`, `tokenize`, `convert_tokens_to_ids`;
- HF `tokenizers` (Rust, `encode_batch`), from the same model with ALBERT's
  normalizers (NFKD, accents stripped, lowercase) in front, as
  `AlbertTokenizerFast` has them;
- plain `sentencepiece` batch encoding (no ALBERT preprocessing at all).

Each is printed with the ratio ours / it. Targets (issue 3): >= 5x official,
>= 3x HF fast, >= 0.8x plain sentencepiece.

    python benchmarks/bench_tokenizer.py [--megabytes 10] [--batch 256] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import sentencepiece as spm  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_keras.sample_text import CORPUS_PATH, SPM_MODEL_PATH  # noqa: E402
from albert_keras.tokenizers import AlbertTokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("ALBERT_KERAS_DATA") or os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "data")
)
CORPORA = ("en_news.txt", "en_brown.txt", "en_austen.txt")


def english_lines(megabytes: float, data_dir: str = SHARED) -> tuple[list[str], str]:
    """Non-empty lines, the three corpora interleaved, up to `megabytes`."""
    folder = os.path.join(data_dir, "pretrain")
    sources = []
    if all(os.path.isfile(os.path.join(folder, n)) for n in CORPORA):
        for name in CORPORA:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                sources.append([line.strip() for line in f if line.strip()])
        where = f"{folder}/{{{','.join(CORPORA)}}}"
    else:
        with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
            sources.append([line.strip() for line in f if line.strip()])
        where = CORPUS_PATH
    lines, size, budget = [], 0, megabytes * 1e6
    for i in range(max(len(s) for s in sources)):
        for source in sources:
            if size < budget and i < len(source):
                lines.append(source[i])
                size += len(source[i].encode("utf-8"))
    return lines, where


def best_of(rounds, fn):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def load_average() -> str:
    """The 1-minute load average: other jobs on the cores skew the timings."""
    try:
        return f"load average {os.getloadavg()[0]:.2f}"
    except OSError:
        return "load average unknown"


def hf_tokenizer(model_file):
    from sentencepiece import sentencepiece_model_pb2
    from tokenizers import normalizers
    from tokenizers.implementations import SentencePieceUnigramTokenizer

    # from_spm imports the protobuf module under its bare name.
    sys.modules.setdefault("sentencepiece_model_pb2", sentencepiece_model_pb2)
    tokenizer = SentencePieceUnigramTokenizer.from_spm(model_file)
    # AlbertTokenizerFast's normalizer: quotes, NFKD, accents, lowercase, spm's.
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Replace("``", '"'),
            normalizers.Replace("''", '"'),
            normalizers.NFKD(),
            normalizers.StripAccents(),
            normalizers.Lowercase(),
            tokenizer.normalizer,
        ]
    )
    return tokenizer


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--model", default=SPM_MODEL_PATH, help="SentencePiece model")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--data-dir",
        help="the folder whose pretrain/ holds the English corpora (default: "
        "$ALBERT_KERAS_DATA, else ../shared/data; the embedded corpus without them)",
    )
    args = parser.parse_args(argv)
    if args.megabytes <= 0 or args.batch < 1 or args.rounds < 1:
        parser.error("--megabytes must be above 0, --batch and --rounds at least 1")
    if not os.path.isfile(args.model):
        parser.error(f"--model {args.model!r} not found: pass a SentencePiece .model")
    if args.data_dir:
        missing = [
            name
            for name in CORPORA
            if not os.path.isfile(os.path.join(args.data_dir, "pretrain", name))
        ]
        if missing:
            parser.error(
                f"--data-dir {args.data_dir!r} has no pretrain/{missing[0]}: pass the "
                f"folder whose pretrain/ holds {', '.join(CORPORA)}"
            )
    lines, where = english_lines(args.megabytes, args.data_dir or SHARED)
    megabytes = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    print(
        f"{len(lines)} lines, {megabytes:.1f} MB of English ({where}); model "
        f"{os.path.basename(args.model)}; {os.cpu_count()} CPU cores; "
        f"{load_average()}"
    )

    tokenizer = AlbertTokenizer(args.model)
    data = (
        tf.data.Dataset.from_tensor_slices(lines)
        .batch(args.batch)
        .map(tokenizer, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )

    def ours():
        for _ in data:
            pass

    ours()  # traces, builds the tables

    sys.path.insert(0, os.path.join(HERE, "..", "tests", "tokenizers"))
    from official_tokenization import tokenization

    official = tokenization.FullTokenizer(None, True, spm_model_file=args.model)

    def official_run():
        for line in lines:
            official.convert_tokens_to_ids(
                official.tokenize(tokenization.preprocess_text(line, lower=True))
            )

    processor = spm.SentencePieceProcessor(model_file=args.model)
    results = {
        "ours: AlbertTokenizer in tf.data": best_of(args.rounds, ours),
        "plain sentencepiece encode(batch)": best_of(
            args.rounds, lambda: processor.encode(lines)
        ),
    }
    try:
        hf = hf_tokenizer(args.model)
        results["HF tokenizers encode_batch"] = best_of(
            args.rounds, lambda: hf.encode_batch(lines)
        )
    except Exception as e:  # optional comparison (pip install tokenizers)
        print(f"HF tokenizers: not measured ({type(e).__name__}: {e})")
    results["official albert.tokenization"] = best_of(1, official_run)

    ours_rate = len(lines) / results["ours: AlbertTokenizer in tf.data"]
    targets = {
        "plain sentencepiece encode(batch)": 0.8,
        "HF tokenizers encode_batch": 3.0,
        "official albert.tokenization": 5.0,
    }
    print(f"{'':36}{'lines/s':>10}{'MB/s':>8}   ours / this   target")
    for name, seconds in results.items():
        rate = len(lines) / seconds
        ratio = ours_rate / rate
        target = targets.get(name)
        verdict = (
            ""
            if target is None
            else f">= {target}x: " + ("met" if ratio >= target else "MISSED")
        )
        print(
            f"{name:36}{rate:>10.0f}{megabytes / seconds:>8.2f}"
            f"   {ratio:10.2f}x   {verdict}"
        )
    # Other jobs on the machine slow every row; the ratios suffer less.
    print(f"at the end: {load_average()}")


if __name__ == "__main__":
    main()
