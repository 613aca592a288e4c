"""Fill-mask throughput: `AlbertFillMaskTextModel` vs transformers' fill-mask pipeline.

Both run the same weights (ALBERT-base layers, random, seeded; the embedded
8,000-piece vocabulary, as no release vocabulary is here) on the same texts:
Austen paragraphs cut to `--words` words with one word masked, `--batch` texts
at a time, top 5, on the CPU, in one process. Ours is text in, candidates out
(tokenizer, packing, model, softmax and top-k in one TensorFlow graph);
transformers' pipeline tokenizes in Rust and runs PyTorch eager. The script
prints texts/s of each, the ratio, and how often the two top-1 candidates
agree (they must, always: the masks stand between spaces, where both
tokenizers agree).

    python benchmarks/bench_fill_mask.py [--texts 128] [--batch 32] [--repeats 3]
    python benchmarks/bench_fill_mask.py --config tiny --texts 8 --repeats 1  # quick
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs  # noqa: E402

CONFIGS = {"base": "albert_base_v2", "tiny": "albert_tiny"}


def masked_texts(count, words, seed=0):
    """`count` paragraphs of at least `words` words, cut there, one word masked."""
    rng = random.Random(seed)
    paragraphs = [
        p.split() for p in read_paragraphs(count * 4) if len(p.split()) >= words
    ]
    texts = []
    for split in paragraphs[:count]:
        split = split[:words]
        split[rng.randrange(len(split))] = "[MASK]"
        texts.append(" ".join(split))
    if len(texts) < count:
        raise SystemExit(
            f"only {len(texts)} paragraphs of {words} words: lower --words"
        )
    return texts


def build_pretrainer(config_name):
    config = AlbertConfig.from_preset(CONFIGS[config_name], vocab_size=8000)
    model = AlbertPretrainer(AlbertBackbone(config))
    rng = np.random.default_rng(0)
    for w in model.weights:  # peaked scores, so the top-1 comparison means something
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    return model


def timed(run, repeats):
    """Median seconds of `run()` after one warm-up call, and its last result."""
    result = run()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def ours(pretrainer, texts, batch, repeats, length):
    from albert_keras.models import with_tokenizer

    model = with_tokenizer(pretrainer, SPM_MODEL_PATH, length, top_k=5)
    seconds, out = timed(
        lambda: model.predict(texts, batch_size=batch, verbose=0), repeats
    )
    return seconds, out["token_ids"][:, 0, 0].tolist()


def transformers_pipeline(pretrainer, texts, batch, repeats, threads):
    import torch
    import transformers

    from checkpoints_convert.hf_writer import save_hf_checkpoint

    torch.set_num_threads(threads)
    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as folder:
        save_hf_checkpoint(pretrainer, folder, vocab=SPM_MODEL_PATH)
        pipe = transformers.pipeline("fill-mask", model=folder, top_k=5, device="cpu")
    with torch.inference_mode():
        seconds, out = timed(lambda: pipe(texts, batch_size=batch), repeats)
    return seconds, [candidates[0]["token"] for candidates in out]


def text_parser(description, texts):
    """The flags of the text benchmarks (this one and bench_embed)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", default="base", choices=sorted(CONFIGS))
    parser.add_argument("--texts", type=int, default=texts)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--output", help="write the results as JSON here")
    return parser


def write_result(args, texts, ours_s, hf_s, **extra):
    """--output: the texts/s of both, their ratio and `extra`, as JSON."""
    if args.output:
        write_json(
            args.output,
            {
                "config": args.config,
                "texts": texts,
                "batch": args.batch,
                "ours_texts_per_s": texts / ours_s,
                "transformers_texts_per_s": texts / hf_s,
                "ratio": hf_s / ours_s,
                **extra,
            },
        )


def main(argv=None):
    args = text_parser(__doc__.split("\n\n")[0], texts=128).parse_args(argv)
    texts = masked_texts(args.texts, args.words)
    pretrainer = build_pretrainer(args.config)
    ours_s, ours_top = ours(pretrainer, texts, args.batch, args.repeats, args.length)
    hf_s, hf_top = transformers_pipeline(
        pretrainer, texts, args.batch, args.repeats, args.threads
    )
    agree = float(np.mean(np.equal(ours_top, hf_top)))
    rows = [
        ("albert-keras AlbertFillMaskTextModel", ours_s),
        ("transformers pipeline", hf_s),
    ]
    print(
        f"{args.config}, {len(texts)} texts of {args.words} words, batch {args.batch}"
    )
    for name, seconds in rows:
        print(f"{name:40s} {len(texts) / seconds:8.1f} texts/s")
    print(
        f"ratio ours / transformers: {hf_s / ours_s:.2f}x; top-1 agreement {agree:.3f}"
    )
    write_result(args, len(texts), ours_s, hf_s, top1_agreement=agree)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
