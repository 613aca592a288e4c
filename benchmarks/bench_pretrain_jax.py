"""MLM + SOP pretraining on the JAX backend, without TensorFlow (GPU machines).

The instances come from `create_pretraining_arrays` (the pairs and masks
`albert-keras create-data` writes, one process per input file: `--split N`
cuts the documents into N files first); `AlbertPretrainer` trains on them
with `fit` and LAMB (`create_optimizer`). With `--minutes`, the first
`2 x --calibration-steps` are timed and the schedule's length is then fitted
to the budget (warmup, then linear decay to 0). Held-out MLM and SOP accuracy
on `--eval-input`. Writes `pretrainer.keras` (float32 weights, no optimizer
state: it loads under TensorFlow too), `summary.json` and `curves.png`.

`--reference hf` also trains Hugging Face `AlbertForPreTraining` (PyTorch,
AdamW, bf16 autocast on GPU) on the same batches for `--reference-steps` and
prints both sequences/s and their ratio.

    KERAS_BACKEND=jax python benchmarks/bench_pretrain_jax.py \\
        --input train.txt --eval-input held_out.txt --vocab vocab.model \\
        --seq-length 128 --batch 512 --minutes 6 --output-dir runs/jax
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

KEYS_X = {
    "token_ids": "input_ids",
    "segment_ids": "segment_ids",
    "padding_mask": "input_mask",
    "mask_positions": "masked_lm_positions",
}
KEYS_Y = {
    "mask_ids": "masked_lm_ids",
    "mask_weights": "masked_lm_weights",
    "sop_labels": "next_sentence_labels",
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", nargs="+", required=True, help="training text files")
    p.add_argument("--eval-input", nargs="*", default=[], help="held-out text files")
    p.add_argument("--vocab", help="SentencePiece .model (default: austen-8k)")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--preset", default="albert_small")
    p.add_argument("--seq-length", type=int, default=128)
    p.add_argument("--predictions", type=int, default=20)
    p.add_argument("--dupe-factor", type=int, default=8)
    p.add_argument("--split", type=int, default=1, help="documents -> N files")
    p.add_argument("--split-sentences", action="store_true")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=0.003)
    p.add_argument("--warmup-fraction", type=float, default=0.05)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--dtype", default="float32", help="e.g. mixed_bfloat16")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--steps", type=int, help="training steps")
    group.add_argument("--minutes", type=float, help="training time budget")
    p.add_argument("--calibration-steps", type=int, default=100)
    p.add_argument("--steps-per-execution", type=int, default=10)
    p.add_argument("--epoch-steps", type=int, default=500)
    p.add_argument("--eval-instances", type=int, default=2048)
    p.add_argument("--reference", choices=["none", "hf"], default="none")
    p.add_argument("--reference-steps", type=int, default=50)
    p.add_argument("--seed", type=int, default=12345)
    return p.parse_args(argv)


def split_documents(paths, parts, sentences, folder):
    """The documents of `paths` dealt round-robin into `parts` files."""
    from albert_keras.pretraining.text_documents import read_documents, write_documents

    documents = [d for path in paths for d in read_documents(path, sentences)]
    if not documents:
        raise ValueError(f"No document in {paths}: the training text is empty.")
    files = []
    for i in range(parts):
        files.append(os.path.join(folder, f"part-{i:03d}.txt"))
        write_documents(files[-1], documents[i::parts])
    return files


def make_arrays(args, files, dupe_factor, seed, sentences):
    from albert_keras.pretraining.pretraining_data import create_pretraining_arrays

    return create_pretraining_arrays(
        files,
        args.vocab,
        max_seq_length=args.seq_length,
        max_predictions_per_seq=args.predictions,
        dupe_factor=dupe_factor,
        split_sentences=sentences,
        seed=seed,
        num_workers=args.workers,
        verbose=False,
    )


def xy(features, index):
    x = {k: features[v][index] for k, v in KEYS_X.items()}
    y = {k: features[v][index] for k, v in KEYS_Y.items()}
    y["sop_labels"] = y["sop_labels"].reshape(-1)
    return x, y


def batches(features, batch, seed):
    """Endless batches: each pass over the instances in a new random order."""
    rng = np.random.default_rng(seed)
    count = len(features["input_ids"])
    if count < batch:
        raise ValueError(
            f"{count} training instances, fewer than one batch of {batch}: "
            "use more text, a larger --dupe-factor or a smaller --batch."
        )
    while True:
        order = rng.permutation(count)
        for start in range(0, count - batch + 1, batch):
            yield xy(features, np.sort(order[start : start + batch]))


def hf_reference(config, features, args):
    """Sequences/s of HF AlbertForPreTraining on the same batches (PyTorch)."""
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    from checkpoints_convert.hf_names import hf_config_dict

    architecture = "AlbertForPreTraining"
    hf_config = transformers.AlbertConfig(**hf_config_dict(config, architecture))
    model = transformers.AlbertForPreTraining(hf_config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    stream = batches(features, args.batch, args.seed + 1)

    def step():
        x, y = next(stream)
        ids = torch.as_tensor(x["token_ids"], dtype=torch.long, device=device)
        labels = torch.full_like(ids, -100)
        rows = np.repeat(np.arange(len(ids)), args.predictions)
        cols = x["mask_positions"].reshape(-1)
        real = y["mask_weights"].reshape(-1) > 0
        labels[rows[real], cols[real]] = torch.as_tensor(
            y["mask_ids"].reshape(-1)[real], dtype=torch.long, device=device
        )
        with torch.autocast(device, torch.bfloat16, enabled=device == "cuda"):
            out = model(
                input_ids=ids,
                token_type_ids=torch.as_tensor(x["segment_ids"], device=device),
                attention_mask=torch.as_tensor(x["padding_mask"], device=device),
                labels=labels,
                sentence_order_label=torch.as_tensor(
                    y["sop_labels"], dtype=torch.long, device=device
                ),
            )
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return out.loss

    for _ in range(5):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.reference_steps):
        loss = step()
    float(loss)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return {
        "library": f"transformers {transformers.__version__}, "
        f"torch {torch.__version__}",
        "device": device,
        "steps": args.reference_steps,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seq_per_s": args.reference_steps * args.batch / seconds,
    }


def main(argv=None):
    start_time = time.time()
    args = parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        files = args.input
        if args.split > 1:
            files = split_documents(
                args.input, args.split, args.split_sentences, folder
            )
        # Split files hold a sentence per line already.
        features, stats = make_arrays(
            args,
            files,
            args.dupe_factor,
            args.seed,
            args.split_sentences and args.split == 1,
        )
        held_out = None
        if args.eval_input:
            held_out, _ = make_arrays(
                args, args.eval_input, 1, args.seed + 1, args.split_sentences
            )
    count = len(features["input_ids"])
    data_seconds = time.time() - start_time
    print(
        f"data: {count} instances ({args.dupe_factor} passes), "
        f"{stats['masked_fraction']:.3f} of tokens masked, {data_seconds:.0f} s",
        flush=True,
    )

    import keras

    from albert_keras.config import AlbertConfig
    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.pretraining.corpus_tokenizer import CorpusTokenizer
    from albert_keras.training.loss_curve_plot import LossCurvePlot
    from albert_keras.training.optimizers import create_optimizer

    keras.utils.set_random_seed(args.seed)
    config = AlbertConfig.from_preset(
        args.preset,
        vocab_size=len(CorpusTokenizer(args.vocab).word_starts),
        max_position_embeddings=max(args.seq_length, 128),
        hidden_dropout_prob=args.dropout,
        attention_probs_dropout_prob=args.dropout,
    )
    model = AlbertPretrainer(AlbertBackbone(config, dtype=args.dtype))
    planned = args.steps or 100_000
    optimizer = create_optimizer(
        "lamb",
        args.learning_rate,
        planned,
        max(1, int(args.warmup_fraction * planned)),
    )
    model.compile(optimizer=optimizer, steps_per_execution=args.steps_per_execution)
    stream = batches(features, args.batch, args.seed)
    plot = LossCurvePlot(
        os.path.join(args.output_dir, "curves.png"),
        title=f"ALBERT pretraining on {keras.backend.backend()}",
    )
    history, epoch, timings = [], 0, []

    def fit(steps):
        nonlocal epoch
        timer = time.time()
        logs = model.fit(
            stream,
            steps_per_epoch=steps,
            epochs=epoch + 1,
            initial_epoch=epoch,
            callbacks=[plot],
            verbose=2,
        ).history
        history.append({k: float(v[-1]) for k, v in logs.items()})
        timings.append((steps, time.time() - timer))
        epoch += 1

    # Keras runs whole executions: keep every fit a multiple of them.
    spe = args.steps_per_execution
    whole = lambda steps: max(spe, steps - steps % spe)  # noqa: E731
    done, step_ms = 0, None
    if args.minutes is not None:
        calibration = whole(args.calibration_steps)
        fit(calibration)  # compiles
        timer = time.time()
        fit(calibration)
        step_ms = (time.time() - timer) * 1000 / calibration
        done = 2 * calibration
        left = args.minutes * 60 - (time.time() - start_time) - 30  # re-trace
        total = done + whole(max(0, int(left * 1000 / step_ms)))
        schedule = optimizer._learning_rate
        schedule.decay_steps = total
        schedule.warmup_steps = max(done, int(args.warmup_fraction * total))
        model.train_function = None  # traced again with the fitted schedule
        print(
            f"{step_ms:.1f} ms per step ({args.batch * 1000 / step_ms:.0f} seq/s): "
            f"{total} steps in {args.minutes} min",
            flush=True,
        )
    else:
        total = whole(args.steps)
    train_start = time.time()
    first = len(timings)
    while done < total:
        steps = min(whole(args.epoch_steps), total - done)
        fit(steps)
        done += steps
    train_seconds = time.time() - train_start
    # Throughput without compilation: the fits after the first of the main
    # phase (it traces again), else the timed calibration fit.
    steady = timings[first + 1 :] or timings[1:2] or timings[:1]
    seq_per_s = sum(n for n, _ in steady) * args.batch / sum(t for _, t in steady)

    plain = AlbertPretrainer(AlbertBackbone(config))
    plain.set_weights(model.get_weights())
    plain.save(os.path.join(args.output_dir, "pretrainer.keras"))
    summary = {
        "backend": keras.backend.backend(),
        "device": _device(),
        "settings": vars(args),
        "config": config.to_dict(),
        "instances": count,
        "parameters": plain.count_params(),
        "steps": int(keras.ops.convert_to_numpy(model.optimizer.iterations)),
        "sequences": total * args.batch,
        "seq_per_s": seq_per_s,
        "calibration_ms_per_step": step_ms,
        "data_seconds": data_seconds,
        "train_seconds": train_seconds,
        "history": history,
    }
    if held_out is not None:
        rows = np.arange(min(args.eval_instances, len(held_out["input_ids"])))
        x, y = xy(held_out, rows)
        plain.compile()
        result = plain.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
        summary["held_out"] = {
            "instances": len(rows),
            "mlm_accuracy": result["mlm_accuracy"],
            "sop_accuracy": result["sop_accuracy"],
        }
    if args.reference == "hf":
        summary["reference"] = hf_reference(config, features, args)
        summary["ratio"] = summary["seq_per_s"] / summary["reference"]["seq_per_s"]
    summary["seconds"] = time.time() - start_time
    with open(os.path.join(args.output_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(
        f"{summary['steps']} steps x {args.batch} in {train_seconds:.0f} s: "
        f"{summary['seq_per_s']:.0f} seq/s on {summary['device']} "
        f"({summary['backend']}, {args.dtype})",
        flush=True,
    )
    if "held_out" in summary:
        h = summary["held_out"]
        print(
            f"held-out ({h['instances']}): MLM {h['mlm_accuracy']:.3f}, "
            f"SOP {h['sop_accuracy']:.3f}"
        )
    if "reference" in summary:
        r = summary["reference"]
        print(
            f"HF AlbertForPreTraining ({r['library']}, {r['device']}): "
            f"{r['seq_per_s']:.0f} seq/s; ours / HF = {summary['ratio']:.2f}"
        )
    return summary


def _device():
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return str(jax.devices()[0].device_kind)
    return "see backend"


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
