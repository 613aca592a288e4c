"""Tokenizer throughput: our in-graph AlbertTokenizer vs the official Python one.

Lines/s on real English text (default: the embedded Austen corpus) for
- ours: `AlbertTokenizer` in a batched `tf.data` pipeline (official
  preprocessing and the digit-comma rule included);
- the official `albert.tokenization` (albert-tensorflow 1.1), line by line;
- plain SentencePiece batch encoding (no ALBERT preprocessing at all);
- HF `tokenizers` (fast), when installed, from the same SentencePiece model.
Each is printed with its ratio to ours.

    python benchmarks/bench_tokenizer.py [--lines 60000] [--batch 1024]
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

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tokenizers"))


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=60000)
    parser.add_argument("--batch", type=int, default=1024)
    args = parser.parse_args()
    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    while len(lines) < args.lines:
        lines = lines + lines
    lines = lines[: args.lines]
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    print(f"{len(lines)} lines, {megabytes:.1f} MB of English")

    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    data = tf.data.Dataset.from_tensor_slices(lines).batch(args.batch)
    data = data.map(tokenizer, num_parallel_calls=tf.data.AUTOTUNE).prefetch(4)
    next(iter(data))  # trace

    def ours():
        for _ in data:
            pass

    from official_tokenization import tokenization

    official = tokenization.FullTokenizer(None, True, spm_model_file=SPM_MODEL_PATH)

    def official_run():
        for line in lines:
            official.convert_tokens_to_ids(
                official.tokenize(tokenization.preprocess_text(line, lower=True))
            )

    processor = spm.SentencePieceProcessor(model_file=SPM_MODEL_PATH)

    def plain():
        processor.encode(lines)

    results = {"ours (tf.data, in-graph)": timed(ours)}
    results["plain sentencepiece batch"] = timed(plain)
    results["official albert.tokenization"] = timed(official_run)
    try:
        from tokenizers.implementations import SentencePieceUnigramTokenizer

        hf = SentencePieceUnigramTokenizer.from_spm(SPM_MODEL_PATH)
        results["HF tokenizers (fast)"] = timed(lambda: hf.encode_batch(lines))
    except Exception as e:  # optional comparison
        print(f"HF tokenizers: not measured ({type(e).__name__}: {e})")
    base = len(lines) / results["ours (tf.data, in-graph)"]
    for name, seconds in results.items():
        rate = len(lines) / seconds
        print(f"  {name:<32}{rate:>10.0f} lines/s   ours / this: {base / rate:.2f}x")


if __name__ == "__main__":
    main()
