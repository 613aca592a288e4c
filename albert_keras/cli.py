"""The `albert-keras` command.

albert-keras info --preset base     parameter table, then a forward pass on text

Also: create-data, pretrain, vocab, finetune, predict, export, fill-mask,
embed (`albert-keras -h`).
"""

from __future__ import annotations

import argparse
import sys
import time

from albert_keras.cli_help import DefaultsHelpFormatter


class UserError(Exception):
    """An error in what the user asked for: printed without a traceback."""


def _add_info(subparsers):
    parser = subparsers.add_parser(
        "info",
        formatter_class=DefaultsHelpFormatter,
        help="parameter table of a preset and a forward pass on real text",
        description=(
            "Build an ALBERT preset (random weights), print its parameters part "
            "by part next to BERT of the same size, and run a forward pass on "
            "sentences of the embedded public-domain corpus."
        ),
    )
    parser.add_argument(
        "preset_name",
        nargs="?",
        metavar="PRESET",
        help="the preset, as --preset gives it (`albert-keras info large`)",
    )
    parser.add_argument(
        "--preset",
        help="preset name: tiny, small, base, large, xlarge, xxlarge or an "
        "albert_*_v1/v2/zh name (default: base)",
    )
    parser.add_argument("--config", help="an albert_config.json instead of a preset")
    parser.add_argument(
        "--batch",
        type=int,
        default=8,
        help="sentences per batch",
    )
    parser.add_argument("--length", type=int, default=128, help="sequence length")
    parser.add_argument(
        "--dtype",
        default="float32",
        help="float32 or mixed_bfloat16",
    )
    parser.set_defaults(run=_run_info)


def _info_preset(args) -> str:
    """The preset of `info`: PRESET or --preset (not two), base by default."""
    given = [p for p in (args.preset_name, args.preset) if p is not None]
    if len(set(given)) > 1 or (given and args.config):
        also = f"--config {args.config}" if args.config else f"--preset {args.preset}"
        raise UserError(
            f"Both {given[0]!r} and {also} name the model: give one of them."
        )
    return given[0] if given else "base"


def _run_info(args):
    from albert_keras.config import AlbertConfig
    from albert_keras.parameter_table import format_table

    args.preset = _info_preset(args)
    try:
        if args.config:
            config = AlbertConfig.from_json_file(args.config)
        else:
            config = AlbertConfig.from_preset(args.preset)
    except (ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from None
    for flag, value in (("--batch", args.batch), ("--length", args.length)):
        if value < 1:
            raise UserError(f"{flag} {value}: give a positive number, e.g. {flag} 8.")
    if args.length > config.max_position_embeddings:
        raise UserError(
            f"--length {args.length} exceeds max_position_embeddings="
            f"{config.max_position_embeddings} of this config."
        )
    print(
        f"ALBERT {args.config or args.preset}: L={config.num_hidden_layers} "
        f"H={config.hidden_size} E={config.embedding_size} "
        f"heads={config.num_attention_heads} groups={config.num_hidden_groups} "
        f"sharing={config.sharing} act={config.hidden_act}"
    )
    print(format_table(config))

    import numpy as np

    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.sample_text import sample_batch

    backbone = AlbertBackbone(config, dtype=args.dtype)
    inputs, sentences = sample_batch(args.batch, args.length, config.vocab_size)
    print(
        f"\nForward pass on {len(sentences)} sentences of the embedded corpus, "
        f"e.g. {sentences[0][:70]!r}"
    )
    backbone.compile(jit_compile=True)
    start = time.perf_counter()
    outputs = backbone.predict_on_batch(inputs)
    first = time.perf_counter() - start
    start = time.perf_counter()
    outputs = backbone.predict_on_batch(inputs)
    seconds = time.perf_counter() - start
    seq = np.asarray(outputs["sequence_output"], "float32")
    print(
        f"sequence_output {seq.shape}, pooled_output "
        f"{tuple(np.shape(outputs['pooled_output']))}, finite: "
        f"{bool(np.isfinite(seq).all())}"
    )
    print(
        f"compile + first batch {first:.1f} s; then {seconds * 1000:.0f} ms per "
        f"batch = {args.batch / seconds:.1f} sequences/s ({args.dtype}, XLA)"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="albert-keras",
        description="ALBERT for Keras 3: inspect, tokenize, pretrain, fine-tune.",
    )
    from albert_keras import __version__

    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_info(subparsers)
    from albert_keras.pretraining.pretrain_cli import add_parsers

    add_parsers(subparsers)
    from albert_keras.tokenizers.vocabulary import add_parser as add_vocab

    add_vocab(subparsers)
    from albert_keras.tasks.finetune_cli import add_parser as add_finetune

    add_finetune(subparsers)
    from albert_keras.tasks.predict_cli import add_parser as add_predict

    add_predict(subparsers)
    from albert_keras.tasks.export_cli import add_parser as add_export

    add_export(subparsers)
    from albert_keras.pretraining.fill_mask_cli import add_parser as add_fill_mask

    add_fill_mask(subparsers)
    from albert_keras.pretraining.embed_cli import add_parser as add_embed

    add_embed(subparsers)
    return parser


def main(argv=None) -> int:
    from albert_keras.quiet_start import plain_warnings, start_tensorflow_quietly
    from albert_keras.training.run_lock import RunFolderBusy

    args = build_parser().parse_args(argv)
    # The command as given: what reruns it in another process (`export`).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    # After parsing: `--help` and usage errors need no TensorFlow, nor do
    # the commands that say so (create-data, vocab).
    if getattr(args, "starts_tensorflow", True):
        start_tensorflow_quietly()
    try:
        with plain_warnings(f"albert-keras {args.command}"):
            return args.run(args) or 0
    except (UserError, ValueError, FileNotFoundError, RunFolderBusy) as e:
        print(f"albert-keras {args.command}: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if e.name not in ("tensorflow", "tensorflow_text"):
            raise
        print(
            f"albert-keras {args.command}: error: it needs TensorFlow and "
            "tensorflow-text (tf.data, the tokenizer ops), which this Python "
            "cannot import: `pip install tensorflow tensorflow-text` (the "
            "package's own dependencies). Without them `albert-keras info`, "
            "`pretrain`, `create-data` and `vocab` run (KERAS_BACKEND=jax or torch).",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
