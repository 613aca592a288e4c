"""Embedding throughput: `AlbertEmbeddingTextModel` vs transformers + mean pooling.

Both run the same weights (ALBERT-base layers, random, seeded; the embedded
8,000-piece vocabulary, as no release vocabulary is here) on the same texts:
Austen paragraphs cut to `--words` words, `--batch` texts at a time, mean
pooling over the real tokens, on the CPU, in one process. Ours is text in,
vectors out (tokenizer, packing padded to each batch's longest text, model
and pooling in one TensorFlow graph); the reference is what
sentence-transformers does with an ALBERT: transformers' Rust tokenizer
(padding to the longest), `AlbertModel` in PyTorch eager and the masked mean
of `last_hidden_state`. The script prints texts/s of each, the ratio, and
the largest difference between the two sets of vectors (float32 rounding,
or it is not a comparison).

    python benchmarks/bench_embed.py [--texts 256] [--batch 32] [--repeats 3]
    python benchmarks/bench_embed.py --config tiny --texts 8 --repeats 1  # quick
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from bench_fill_mask import CONFIGS, text_parser, timed, write_result  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig  # noqa: E402
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs  # noqa: E402


def paragraph_texts(count, words):
    """`count` paragraphs of the embedded corpus, cut to `words` words (the
    short ones kept: lengths vary, as in real requests)."""
    paragraphs = [p.split() for p in read_paragraphs(count * 2) if len(p.split()) > 3]
    if len(paragraphs) < count:
        raise SystemExit(f"only {len(paragraphs)} paragraphs: lower --texts")
    return [" ".join(p[:words]) for p in paragraphs[:count]]


def build_backbone(config_name):
    config = AlbertConfig.from_preset(CONFIGS[config_name], vocab_size=8000)
    model = AlbertBackbone(config)
    rng = np.random.default_rng(0)
    for w in model.weights:
        w.assign(rng.normal(0, 0.05, w.shape).astype("float32"))
    return model


def ours(backbone, texts, batch, repeats, length):
    from albert_keras.models import with_tokenizer

    model = with_tokenizer(
        backbone, SPM_MODEL_PATH, length, pooling="mean", dynamic_length=True
    )
    return timed(lambda: model.embed(texts, batch_size=batch), repeats)


def transformers_mean_pooling(backbone, texts, batch, repeats, length, threads):
    import torch
    import transformers

    from checkpoints_convert.hf_writer import save_hf_checkpoint

    torch.set_num_threads(threads)
    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as folder:
        save_hf_checkpoint(backbone, folder, vocab=SPM_MODEL_PATH)
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        model = transformers.AlbertModel.from_pretrained(folder).eval()

    def run():
        vectors = []
        for start in range(0, len(texts), batch):
            feed = tokenizer(
                texts[start : start + batch],
                padding=True,
                truncation=True,
                max_length=length,
                return_tensors="pt",
            )
            hidden = model(**feed).last_hidden_state
            mask = feed["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vectors.append((hidden * mask).sum(1) / mask.sum(1).clamp(min=1))
        return torch.cat(vectors).numpy()

    with torch.inference_mode():
        return timed(run, repeats)


def main(argv=None):
    args = text_parser(__doc__.split("\n\n")[0], texts=256).parse_args(argv)
    texts = paragraph_texts(args.texts, args.words)
    backbone = build_backbone(args.config)
    ours_s, ours_v = ours(backbone, texts, args.batch, args.repeats, args.length)
    hf_s, hf_v = transformers_mean_pooling(
        backbone, texts, args.batch, args.repeats, args.length, args.threads
    )
    diff = float(np.abs(ours_v - hf_v).max())
    print(
        f"{args.config}, {len(texts)} texts of up to {args.words} words, batch "
        f"{args.batch}, mean pooling"
    )
    for name, seconds in (
        ("albert-keras AlbertEmbeddingTextModel", ours_s),
        ("transformers AlbertModel + mean pooling", hf_s),
    ):
        print(f"{name:42s} {len(texts) / seconds:8.1f} texts/s")
    print(
        f"ratio ours / transformers: {hf_s / ours_s:.2f}x; largest vector "
        f"difference {diff:.1e}"
    )
    write_result(args, len(texts), ours_s, hf_s, max_abs_diff=diff)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
