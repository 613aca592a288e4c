"""Bi-encoder training steps: `--task embed`'s model vs sentence-transformers.

Both train the same weights (ALBERT-base layers, random, seeded; the
embedded 8,000-piece vocabulary, as no release vocabulary is here) on the
same (anchor, positive) pairs, the two halves of Austen paragraphs, in the
same batches: mean pooling, the in-batch-negatives loss at scale 20
(sentence-transformers' `MultipleNegativesRankingLoss`) and AdamW, on the
CPU, in one process. Ours is `AlbertBiEncoder` + `InBatchNegativesLoss`
through `fit` (TensorFlow, XLA), its batches from `embedding_dataset` (each
cut to its longest text, rounded up to 32); the reference is a
sentence-transformers `SentenceTransformer` (transformers' `AlbertModel` +
mean `Pooling`) with its own `MultipleNegativesRankingLoss`, stepped by a
PyTorch loop (tokenize padded to the batch's longest, loss, backward, AdamW),
its trainer's step without the data loader. The script prints pairs/s of
each (median epoch after a first, compiling one), the ratio, and the loss
of both on the first batch before any update, which must agree (the same
model, loss and data), or it is not a comparison.

    pip install sentence-transformers   # the reference (its PyTorch too)
    python benchmarks/bench_embed_finetune.py [--pairs 256] [--batch 32]
    python benchmarks/bench_embed_finetune.py --config tiny --pairs 32 --repeats 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from bench_embed import build_backbone  # noqa: E402
from bench_fill_mask import CONFIGS  # noqa: E402

from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs  # noqa: E402

SCALE = 20.0


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="base", choices=sorted(CONFIGS))
    p.add_argument("--pairs", type=int, default=256)
    p.add_argument("--words", type=int, default=24, help="words per text at most")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--length", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=2e-5)
    p.add_argument("--repeats", type=int, default=2, help="timed epochs of each")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--output", help="write the results as JSON here")
    return p


def paragraph_pairs(count, words):
    """(anchor, positive): the first and second halves of `count` paragraphs
    of the embedded corpus, each cut to `words` words."""
    pairs = []
    for paragraph in read_paragraphs(count * 4):
        split = paragraph.split()
        if len(split) >= 8:
            half = len(split) // 2
            pairs.append(
                (" ".join(split[:half][:words]), " ".join(split[half:][:words]))
            )
        if len(pairs) == count:
            return pairs
    raise SystemExit(f"only {len(pairs)} paragraphs of 8 words or more: lower --pairs")


def ours(backbone, pairs, args):
    """(seconds per epoch, first batch's loss) of `AlbertBiEncoder.fit`."""
    import keras

    from albert_keras.models import AlbertBiEncoder
    from albert_keras.tasks.task_datasets import embedding_dataset
    from albert_keras.tokenizers import AlbertTokenizer
    from albert_keras.training import InBatchNegativesLoss

    examples = [{"texts": list(p), "positive_id": i} for i, p in enumerate(pairs)]
    dataset = embedding_dataset(
        examples, AlbertTokenizer(SPM_MODEL_PATH), args.length, args.batch
    )
    model = AlbertBiEncoder(backbone, pooling="mean")
    loss = InBatchNegativesLoss(scale=SCALE)
    x, ids = next(iter(dataset))
    first = float(loss(ids, model.predict_on_batch(x)["embeddings"]))
    model.compile(
        optimizer=keras.optimizers.AdamW(args.learning_rate, weight_decay=0.01),
        loss={"embeddings": loss},
        jit_compile=True,
    )
    model.fit(dataset, epochs=1, verbose=0)  # compiles each batch shape
    return _median(lambda: model.fit(dataset, epochs=1, verbose=0), args), first


def sentence_transformers_steps(backbone, pairs, args):
    """(seconds per epoch, first batch's loss) of sentence-transformers."""
    import torch
    import transformers

    from checkpoints_convert.hf_writer import save_hf_checkpoint

    try:
        from sentence_transformers import SentenceTransformer, losses, models
    except ModuleNotFoundError:
        raise SystemExit(
            "sentence-transformers is the reference: pip install sentence-transformers"
        ) from None
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as folder:
        save_hf_checkpoint(backbone, folder, vocab=SPM_MODEL_PATH)
        encoder = models.Transformer(folder, max_seq_length=args.length)
        pooling = models.Pooling(backbone.config.hidden_size, "mean")
        model = SentenceTransformer(modules=[encoder, pooling], device="cpu")
    loss = losses.MultipleNegativesRankingLoss(model, scale=SCALE)
    tokenize = getattr(model, "preprocess", model.tokenize)  # v6 renamed it
    batches = [
        [tokenize([p[i] for p in pairs[s : s + args.batch]]) for i in (0, 1)]
        for s in range(0, len(pairs), args.batch)
    ]
    with torch.no_grad():
        first = float(loss(batches[0], None))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=args.learning_rate, weight_decay=0.01
    )
    model.train()

    def epoch():
        for features in batches:
            loss(features, None).backward()
            optimizer.step()
            optimizer.zero_grad()

    epoch()  # as ours: a first epoch untimed
    return _median(epoch, args), first


def _median(run, args):
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main(argv=None):
    args = parser().parse_args(argv)
    if args.batch < 2 or args.pairs < args.batch:
        raise SystemExit("--batch must be 2 or more and --pairs at least --batch")
    pairs = paragraph_pairs(args.pairs, args.words)
    backbone = build_backbone(args.config)
    st_s, st_loss = sentence_transformers_steps(backbone, pairs, args)
    ours_s, ours_loss = ours(backbone, pairs, args)
    print(
        f"{args.config}, {len(pairs)} pairs of up to {args.words} words, batch "
        f"{args.batch}, length {args.length}, mean pooling, scale {SCALE:g}"
    )
    for name, seconds in (
        ("albert-keras AlbertBiEncoder + InBatchNegativesLoss", ours_s),
        ("sentence-transformers MultipleNegativesRankingLoss", st_s),
    ):
        print(f"{name:52s} {len(pairs) / seconds:8.1f} pairs/s")
    print(
        f"ratio ours / sentence-transformers: {st_s / ours_s:.2f}x; first-batch "
        f"loss {ours_loss:.6f} vs {st_loss:.6f} (difference "
        f"{abs(ours_loss - st_loss):.1e})"
    )
    if args.output:
        write_json(
            args.output,
            {
                "config": args.config,
                "pairs": len(pairs),
                "batch": args.batch,
                "ours_pairs_per_s": len(pairs) / ours_s,
                "sentence_transformers_pairs_per_s": len(pairs) / st_s,
                "ratio": st_s / ours_s,
                "first_loss": {"ours": ours_loss, "sentence_transformers": st_loss},
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
