"""Serving throughput: a classifier's SavedModel on raw text vs transformers' pipeline.

One classifier (`--config`: ALBERT-small or base layers, random and seeded,
the embedded 8,000-piece vocabulary) is exported as `albert-keras finetune`
exports it: a SavedModel whose `serve(texts)` tokenizes, packs and classifies
in one TensorFlow graph, 64 rows at a time. Two exports are timed:

- full: every slice padded to `--length` (the exports before this script);
- cut: each slice padded to its own longest row (`dynamic_length=True`, what
  the tasks export now).

The peer is transformers' text-classification pipeline (Rust tokenizer,
PyTorch eager, each batch padded to its longest row) on the same weights
(`save_hf_checkpoint`) and the same texts, in the same process. The texts are
Austen paragraphs (embedded) or a JSON Lines file's `text` field (`--data`,
e.g. ../shared/data/tasks/rt_sentiment/train.jsonl). It prints texts/s of
each, cut's speed-up over full, the ratio of ours (cut) to transformers, and
how often the two predicted labels agree.

    python benchmarks/bench_serving.py [--data FILE] [--texts 1024]
    python benchmarks/bench_serving.py --config tiny --texts 16 --repeats 1  # quick
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from bench_fill_mask import timed  # noqa: E402
from bench_finetune_padding import read_texts  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.models import AlbertClassifier  # noqa: E402
from albert_keras.sample_text import SPM_MODEL_PATH  # noqa: E402

CONFIGS = {"small": "albert_small", "base": "albert_base_v2", "tiny": "albert_tiny"}
BATCH = 64  # the SavedModel's default serving_rows; the pipeline's batch_size


def build_classifier(config_name, length):
    config = AlbertConfig.from_preset(
        CONFIGS[config_name], vocab_size=8000, max_position_embeddings=max(length, 128)
    )
    keras.utils.set_random_seed(0)
    return AlbertClassifier(AlbertBackbone(config), num_classes=2)


def ours(classifier, texts, length, dynamic, repeats, folder):
    import tensorflow as tf

    from albert_keras.models import with_tokenizer

    model = with_tokenizer(classifier, SPM_MODEL_PATH, length, dynamic_length=dynamic)
    path = os.path.join(folder, "cut" if dynamic else "full")
    model.export(path, verbose=False)
    served = tf.saved_model.load(path)
    batch = tf.constant(texts)
    seconds, out = timed(lambda: served.serve(batch)["logits"].numpy(), repeats)
    return seconds, out.argmax(-1)


def transformers_pipeline(classifier, texts, length, repeats, threads, folder):
    import torch
    import transformers

    from checkpoints_convert.hf_writer import save_hf_checkpoint

    torch.set_num_threads(threads)
    transformers.logging.set_verbosity_error()
    path = os.path.join(folder, "hf")
    save_hf_checkpoint(classifier, path, vocab=SPM_MODEL_PATH)
    pipe = transformers.pipeline("text-classification", model=path, device="cpu")

    def run():
        return pipe(
            texts, batch_size=BATCH, truncation=True, max_length=length, top_k=1
        )

    with torch.inference_mode():
        seconds, out = timed(run, repeats)
    labels = pipe.model.config.label2id
    return seconds, np.array([labels[row[0]["label"]] for row in out])


def report(args, texts, times, agree):
    full, cut, hf = times
    print(f"{args.config}, {len(texts)} texts, length {args.length}, batch {BATCH}")
    for name, seconds in (
        ("albert-keras SavedModel, full length", full),
        ("albert-keras SavedModel, cut slices", cut),
        ("transformers pipeline", hf),
    ):
        print(f"{name:40s} {len(texts) / seconds:8.1f} texts/s")
    print(
        f"cut vs full: {full / cut:.2f}x; ratio ours (cut) / transformers: "
        f"{hf / cut:.2f}x (full: {hf / full:.2f}x); label agreement {agree:.3f}"
    )
    return {
        "config": args.config,
        "texts": len(texts),
        "length": args.length,
        "full_texts_per_s": len(texts) / full,
        "cut_texts_per_s": len(texts) / cut,
        "transformers_texts_per_s": len(texts) / hf,
        "cut_over_full": full / cut,
        "ratio": hf / cut,
        "ratio_full": hf / full,
        "label_agreement": agree,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="small", choices=sorted(CONFIGS))
    parser.add_argument(
        "--data", help="JSON Lines with a `text` field (default: Austen)"
    )
    parser.add_argument("--texts", type=int, default=1024)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args(argv)
    texts = read_texts(args.data, args.texts)
    classifier = build_classifier(args.config, args.length)
    with tempfile.TemporaryDirectory() as folder:
        full, full_labels = ours(
            classifier, texts, args.length, False, args.repeats, folder
        )
        cut, cut_labels = ours(
            classifier, texts, args.length, True, args.repeats, folder
        )
        hf, hf_labels = transformers_pipeline(
            classifier, texts, args.length, args.repeats, args.threads, folder
        )
    if not np.array_equal(full_labels, cut_labels):
        raise SystemExit("full and cut exports disagree: a bug, not a measurement")
    agree = float(np.mean(cut_labels == hf_labels))
    results = report(args, texts, (full, cut, hf), agree)
    if args.output:
        write_json(args.output, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
