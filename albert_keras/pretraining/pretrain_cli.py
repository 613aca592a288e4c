"""`albert-keras create-data` and `albert-keras pretrain`: the main job.

With no arguments, `albert-keras pretrain` pretrains a small ALBERT (MLM +
SOP) on the embedded public-domain corpus (Jane Austen) on the CPU, then
reports MLM and SOP accuracy on held-out chapters next to a unigram baseline.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil

from albert_keras.sample_text import CORPUS_PATH, SPM_MODEL_PATH


def _data_arguments(parser):
    from albert_keras.pretraining.create_data_cli import add_data_arguments

    # None: resolved by `_resolve_defaults` (smaller for the embedded corpus).
    add_data_arguments(
        parser, max_seq_length=None, max_predictions_per_seq=None, dupe_factor=2
    )


def add_parsers(subparsers):
    from albert_keras.pretraining.create_data_cli import add_parser

    add_parser(subparsers)  # create-data

    pretrain = subparsers.add_parser(
        "pretrain",
        help="pretrain ALBERT (MLM + SOP); with no arguments, a small model on "
        "the embedded corpus",
    )
    _data_arguments(pretrain)
    pretrain.add_argument("--records", help="TFRecords to train on (skip create-data)")
    pretrain.add_argument("--eval-records", help="held-out TFRecords")
    pretrain.add_argument(
        "--eval-steps", type=int, help="held-out batches per evaluation (default all)"
    )
    pretrain.add_argument("--output-dir", default="runs/pretrain")
    pretrain.add_argument("--preset", default="albert_small")
    pretrain.add_argument("--config", help="albert_config.json instead of a preset")
    pretrain.add_argument("--batch-size", type=int, default=32, help="global batch")
    pretrain.add_argument(
        "--steps", type=int, help="default 1000, or 400 for the embedded corpus"
    )
    pretrain.add_argument("--warmup-steps", type=int, default=100)
    pretrain.add_argument("--learning-rate", type=float, default=5e-3)
    pretrain.add_argument("--steps-per-epoch", type=int, default=100)
    pretrain.add_argument("--save-every", type=int, default=100)
    pretrain.add_argument("--keep-checkpoints", type=int, default=3)
    pretrain.add_argument("--steps-per-execution", type=int, default=1)
    pretrain.add_argument(
        "--strategy",
        default="auto",
        choices=["auto", "one_device", "mirrored", "multi_worker", "tpu"],
    )
    pretrain.add_argument("--tpu", help="TPU name or address for --strategy tpu")
    pretrain.add_argument("--mixed-precision", action="store_true", help="bfloat16")
    pretrain.add_argument("--no-jit", action="store_true", help="disable XLA")
    pretrain.add_argument(
        "--init-checkpoint", help="official checkpoint to continue pretraining from"
    )
    pretrain.add_argument("--init-from-group0", action="store_true")
    pretrain.set_defaults(run=run_pretrain)


def _resolve_defaults(args):
    """Smaller sequences and fewer steps for the embedded default (a few minutes)."""
    embedded = not args.input and not getattr(args, "records", None)
    if args.max_seq_length is None:
        args.max_seq_length = 64 if embedded else 128
    if args.max_predictions_per_seq is None:
        args.max_predictions_per_seq = 10 if embedded else 20
    if getattr(args, "steps", 0) is None:
        args.steps = 400 if embedded else 1000


def _data_options(args):
    from albert_keras.pretraining.create_data_cli import data_options

    _resolve_defaults(args)
    return dict(data_options(args), vocab=args.vocab or SPM_MODEL_PATH)


def split_embedded_corpus(folder, every=10):
    """Writes the embedded corpus as train.txt and eval.txt (every 10th chapter)."""
    os.makedirs(folder, exist_ok=True)
    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        documents = [d for d in f.read().split("\n\n") if d.strip()]
    train = [d for i, d in enumerate(documents) if i % every != every - 1]
    held = [d for i, d in enumerate(documents) if i % every == every - 1]
    paths = []
    for name, docs in (("train.txt", train), ("eval.txt", held)):
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n\n".join(docs) + "\n")
        paths.append(path)
    return paths


def _check_vocabulary_size(config, vocab, vocabulary_size):
    from albert_keras.tokenizers.vocabulary_files import check_vocabulary_size

    check_vocabulary_size(
        config.vocab_size,
        vocabulary_size,
        "pass the --vocab the config (or checkpoint) was made for.",
        vocabulary=vocab,
    )


def run_pretrain(args):
    import keras

    from albert_keras.config import AlbertConfig
    from albert_keras.pretraining.pretraining_data import (
        create_pretraining_data,
        format_stats,
    )
    from albert_keras.pretraining.pretraining_dataset import pretraining_dataset
    from albert_keras.training.pretraining_run import run_pretraining, unigram_accuracy
    from albert_keras.training.strategies import get_strategy

    _resolve_defaults(args)
    output_dir = args.output_dir
    os.makedirs(output_dir, exist_ok=True)
    config = (
        AlbertConfig.from_json_file(args.config)
        if args.config
        else AlbertConfig.from_preset(args.preset)
    )
    from albert_keras.tokenizers import load_tokenizer, with_tokenizer

    vocab = args.vocab or SPM_MODEL_PATH
    tokenizer = load_tokenizer(vocab, lowercase=args.lowercase)
    vocabulary_size = int(tokenizer.vocabulary_size())
    if args.config:
        _check_vocabulary_size(config, vocab, vocabulary_size)
    elif not args.init_checkpoint:
        # A preset takes the size of the vocabulary it is trained with.
        config = config.replace(vocab_size=vocabulary_size)
    config = config.replace(max_position_embeddings=max(args.max_seq_length, 128))
    records, eval_records = args.records, args.eval_records
    if records is None:
        data_dir = os.path.join(output_dir, "data")
        done = os.path.join(data_dir, "stats.json")
        if not os.path.exists(done):
            if args.input:
                inputs, held = args.input, None
            else:
                inputs, held = split_embedded_corpus(os.path.join(data_dir, "text"))
                inputs = [inputs]
            print("Creating pretraining data ...", flush=True)
            stats = create_pretraining_data(
                inputs,
                os.path.join(data_dir, "train", ""),
                split_sentences=args.split_sentences or not args.input,
                **_data_options(args),
            )
            print(format_stats(stats))
            if held:
                options = dict(
                    _data_options(args), dupe_factor=1, seed=args.seed + 1, num_shards=1
                )
                create_pretraining_data(
                    [held],
                    os.path.join(data_dir, "eval", ""),
                    split_sentences=True,
                    verbose=False,
                    **options,
                )
            with open(done, "w") as f:
                json.dump({k: v for k, v in stats.items() if k != "files"}, f)
        records = os.path.join(data_dir, "train", "*.tfrecord")
        if os.path.isdir(os.path.join(data_dir, "eval")):
            eval_records = os.path.join(data_dir, "eval", "*.tfrecord")
    strategy = get_strategy(args.strategy, args.tpu)
    lengths = (args.max_seq_length, args.max_predictions_per_seq)

    def train_dataset(skip):
        return pretraining_dataset(
            records, args.batch_size, *lengths, seed=args.seed
        ).skip(skip)

    eval_dataset = None
    if eval_records:
        eval_dataset = pretraining_dataset(
            eval_records, args.batch_size, *lengths, training=False
        )
    init_model = None
    if args.init_checkpoint:
        from checkpoints_convert import load_official_checkpoint

        init_model = load_official_checkpoint(args.init_checkpoint, model="pretrainer")
        if not args.init_from_group0:
            config = init_model.backbone.config
        _check_vocabulary_size(config, vocab, vocabulary_size)
    print(
        f"Pretraining {args.preset if not args.config else args.config}: "
        f"H={config.hidden_size} L={config.num_hidden_layers} V={config.vocab_size}, "
        f"batch {args.batch_size} x {args.max_seq_length}, {args.steps} steps, "
        f"{strategy.num_replicas_in_sync} replica(s); logs in {output_dir}",
        flush=True,
    )
    metrics = run_pretraining(
        train_dataset,
        config,
        output_dir,
        strategy=strategy,
        global_batch_size=args.batch_size,
        sequence_length=args.max_seq_length,
        num_train_steps=args.steps,
        num_warmup_steps=min(args.warmup_steps, args.steps),
        learning_rate=args.learning_rate,
        steps_per_epoch=args.steps_per_epoch,
        save_every=args.save_every,
        keep_checkpoints=args.keep_checkpoints,
        steps_per_execution=args.steps_per_execution,
        jit_compile=not args.no_jit,
        dtype="mixed_bfloat16" if args.mixed_precision else None,
        eval_dataset=eval_dataset,
        eval_steps=args.eval_steps,
        init_model=init_model,
        init_from_group0=args.init_from_group0,
    )
    model = metrics.pop("model")
    # The vocabulary beside the model: `albert-keras finetune --init
    # <output_dir>/pretrainer.keras` finds it there.
    name = "vocab.model" if vocab.endswith(".model") else "vocab.txt"
    shutil.copy(vocab, os.path.join(output_dir, name))
    # The backbone with its tokenizer: `serve(texts)` / `serve_pairs(a, b)` on
    # tf.string give `sequence_output` and `pooled_output`.
    with_tokenizer(model.backbone, tokenizer, args.max_seq_length).export(
        os.path.join(output_dir, "savedmodel"), verbose=False
    )
    if eval_dataset is not None:
        baseline = unigram_accuracy(eval_dataset, args.eval_steps)
        metrics["eval_mlm_unigram_baseline"] = baseline
        with open(os.path.join(output_dir, "metrics.json"), "w") as f:
            json.dump(metrics, f, indent=2)
        print(
            f"\nHeld-out chapters: MLM accuracy {metrics['eval_mlm_accuracy']:.3f} "
            f"(unigram baseline {baseline:.3f}), SOP accuracy "
            f"{metrics['eval_sop_accuracy']:.3f} (chance 0.5)"
        )
    keras.backend.clear_session()
    print(
        f"Wrote {output_dir}/pretrainer.keras, {name}, savedmodel/ (text in), "
        "curves.png, history.csv, logs/ (TensorBoard), checkpoints/"
    )
    return 0
