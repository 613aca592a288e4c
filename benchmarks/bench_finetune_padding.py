"""Fine-tuning epoch time by padding: full length, cut to the batch, grouped by length.

One classifier (`--config`: ALBERT-small or base layers, random and seeded,
dropout 0, the embedded 8,000-piece vocabulary) trains one epoch of `--texts`
texts, batch 32, `--length` 128, in three ways, in ours and in transformers
(PyTorch eager, the same weights through `save_hf_checkpoint`):

- full: every batch padded to `--length` (ours before batches were cut;
  transformers' `padding="max_length"`);
- cut: each batch cut to its longest row (ours rounds up to 32, always on
  now; transformers' `DataCollatorWithPadding`);
- grouped: rows of similar length batched together (ours
  `group_by_length=True`; transformers' `LengthGroupedSampler`, the sampler of
  its Trainer's `group_by_length`), then cut.

The texts are Austen paragraphs (embedded), or a JSON Lines file's `text`
field (`--data`, e.g. ../shared/data/tasks/rt_sentiment/train.jsonl). Each
epoch is timed after a warm-up epoch (ours compiles with XLA in it). It
prints seconds per epoch, the speed-up over full length, and the ratio of
ours to transformers for each way.

    python benchmarks/bench_finetune_padding.py [--data FILE] [--texts 2048]
    python benchmarks/bench_finetune_padding.py --config tiny --texts 64  # quick
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_keras import AlbertBackbone, AlbertConfig  # noqa: E402
from albert_keras.atomic_files import write_json  # noqa: E402
from albert_keras.models import AlbertClassifier  # noqa: E402
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs  # noqa: E402
from albert_keras.tasks.task_datasets import text_dataset, tokenize_texts  # noqa: E402
from albert_keras.tokenizers import AlbertPacker, AlbertTokenizer  # noqa: E402
from albert_keras.training.optimizers import create_optimizer  # noqa: E402

CONFIGS = {"small": "albert_small", "base": "albert_base_v2", "tiny": "albert_tiny"}
WAYS = ("full", "cut", "grouped")
BATCH = 32
EPOCHS = 3  # the first compiles (ours); the median of the others is reported


def read_texts(path, count):
    if path is None:
        return read_paragraphs(count)[:count]
    if not os.path.isfile(path):
        raise SystemExit(f"--data {path}: no such file (a JSON Lines file with `text`)")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()][:count]


def build_classifier(config_name, length):
    config = AlbertConfig.from_preset(
        CONFIGS[config_name],
        vocab_size=8000,
        max_position_embeddings=max(length, 128),
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    keras.utils.set_random_seed(0)
    return AlbertClassifier(AlbertBackbone(config), num_classes=2, dropout=0.0)


def our_batches(way, texts, labels, tokenizer, length):
    examples = [
        {"text_a": t, "text_b": None, "label": int(y)}
        for t, y in zip(texts, labels, strict=True)
    ]
    if way != "full":
        return text_dataset(
            examples,
            tokenizer,
            length,
            BATCH,
            training=True,
            epochs=range(EPOCHS),
            group_by_length=way == "grouped",
        )
    ids = tokenize_texts(tokenizer, texts)
    packed = AlbertPacker.for_tokenizer(tokenizer, length)(ids)
    dataset = tf.data.Dataset.from_tensor_slices((packed, labels))
    dataset = dataset.shuffle(len(texts), seed=0).batch(BATCH)
    return dataset.repeat(EPOCHS).prefetch(2)


class EpochTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.started)


def time_ours(model, batches, steps):
    """Seconds of each of EPOCHS epochs (XLA compiles in the first ones:
    one step per batch shape)."""
    times = EpochTimes()
    model.fit(
        batches, epochs=EPOCHS, steps_per_epoch=steps, verbose=0, callbacks=[times]
    )
    return times.seconds


def hf_batches(way, encoded, labels, length):
    """Lists of (input_ids, attention_mask, labels) torch batches."""
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    lengths = [len(ids) for ids in encoded]
    generator = torch.Generator().manual_seed(0)
    if way == "grouped":
        order = list(LengthGroupedSampler(BATCH, lengths=lengths, generator=generator))
    else:
        order = torch.randperm(len(encoded), generator=generator).tolist()
    batches = []
    for start in range(0, len(order), BATCH):
        rows = order[start : start + BATCH]
        width = length if way == "full" else max(lengths[i] for i in rows)
        ids = torch.zeros(len(rows), width, dtype=torch.long)
        mask = torch.zeros(len(rows), width, dtype=torch.long)
        for r, i in enumerate(rows):
            ids[r, : lengths[i]] = torch.tensor(encoded[i])
            mask[r, : lengths[i]] = 1
        batches.append((ids, mask, torch.tensor(labels[rows], dtype=torch.long)))
    return batches


def time_transformers(folder, batches, threads):
    import torch
    import transformers

    torch.set_num_threads(threads)
    model = transformers.AlbertForSequenceClassification.from_pretrained(folder)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)

    seconds = []
    for _ in range(EPOCHS):
        start = time.perf_counter()
        for ids, mask, y in batches:
            loss = model(input_ids=ids, attention_mask=mask, labels=y).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        seconds.append(time.perf_counter() - start)
    return seconds


def hf_encoded(texts, tokenizer, length):
    """Our packing's token ids (the same rows for both), unpadded."""
    packed = AlbertPacker.for_tokenizer(tokenizer, length)(
        tokenize_texts(tokenizer, texts)
    )
    real = packed["padding_mask"].numpy().astype(bool)
    return [
        row[keep].tolist()
        for row, keep in zip(packed["token_ids"].numpy(), real, strict=True)
    ]


def run(args):
    from checkpoints_convert.hf_writer import save_hf_checkpoint

    texts = read_texts(args.data, args.texts)
    labels = np.arange(len(texts), dtype="int32") % 2
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    encoded = hf_encoded(texts, tokenizer, args.length)
    results = {
        "texts": len(texts),
        "mean_tokens": float(np.mean([len(e) for e in encoded])),
    }
    with tempfile.TemporaryDirectory() as folder:
        save_hf_checkpoint(build_classifier(args.config, args.length), folder)
        steps = -(-len(texts) // BATCH)
        for way in WAYS:
            model = build_classifier(args.config, args.length)
            model.compile(
                # As `albert-keras finetune` trains (`DenseAdamW`, clipping
                # 1.0), at the constant rate and decay of the torch side.
                optimizer=create_optimizer(
                    "adamw", 1e-4, steps * EPOCHS, 0, lr_schedule="constant"
                ),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                jit_compile=True,
            )
            batches = our_batches(way, texts, labels, tokenizer, args.length)
            ours_epochs = time_ours(model, batches, steps)
            torch_batches = hf_batches(way, encoded, labels, args.length)
            hf_epochs = time_transformers(folder, torch_batches, args.threads)
            ours = float(np.median(ours_epochs[1:]))
            hf = float(np.median(hf_epochs[1:]))
            results[way] = {
                "ours_s": ours,
                "transformers_s": hf,
                "ratio": hf / ours,
                "ours_epochs_s": ours_epochs,
                "transformers_epochs_s": hf_epochs,
                # Token columns an epoch computes (rows x batch width).
                "ours_tokens": sum(
                    int(np.prod(x["token_ids"].shape)) for x, _ in batches.take(steps)
                ),
                "transformers_tokens": sum(int(b[0].numel()) for b in torch_batches),
            }
            print(
                f"{way:8s} ours {ours:7.1f} s/epoch   transformers {hf:7.1f} s/epoch"
                f"   ratio ours / transformers {hf / ours:.2f}x",
                flush=True,
            )
    for way in WAYS[1:]:
        speedup = results["full"]["ours_s"] / results[way]["ours_s"]
        results[way]["speedup_over_full"] = speedup
        print(f"{way}: {speedup:.2f}x faster than full length (ours)")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="small", choices=sorted(CONFIGS))
    parser.add_argument(
        "--data", help="JSON Lines with a `text` field (default: Austen)"
    )
    parser.add_argument("--texts", type=int, default=2048)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args(argv)
    print(f"{args.config}, {args.texts} texts, batch {BATCH}, length {args.length}")
    results = run(args)
    if args.output:
        write_json(args.output, {"config": args.config, **results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
