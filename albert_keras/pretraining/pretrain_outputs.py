"""What `albert-keras pretrain` writes beside the pretrainer: the vocabulary, the
text-in SavedModel and the held-out report."""

from __future__ import annotations

import os

from albert_keras.pretraining.pretrain_inputs import report_held_out


def write_outputs(args, metrics, vocab, sizes):
    """The vocabulary and the text-in SavedModel beside the pretrainer, and the
    held-out report; returns the vocabulary's file name and what the text
    model became (None in a process other than the chief)."""
    from albert_keras.atomic_files import copy_file, write_json
    from albert_keras.training.worker_files import is_chief

    output_dir = args.output_dir
    model = metrics.pop("model")
    if not is_chief():  # the chief writes the run's files
        return None
    # The vocabulary beside the model: `albert-keras finetune --init
    # <output_dir>/pretrainer.keras` finds it there.
    name = "vocab.model" if vocab.endswith(".model") else "vocab.txt"
    copy_file(vocab, os.path.join(output_dir, name))
    text_model = _export_text_model(args, model, vocab)
    if sizes:
        metrics.update({f"eval_{k}": v for k, v in sizes.items()})
        write_json(os.path.join(output_dir, "metrics.json"), metrics)
        report_held_out(args, sizes, metrics)
    return name, text_model


def _export_text_model(args, model, vocab):
    """`savedmodel/`: the backbone with its tokenizer (`serve(texts)` /
    `serve_pairs(a, b)` on tf.string give `sequence_output` and
    `pooled_output`). TensorFlow builds it: here on TensorFlow, in a
    TensorFlow process from `pretrainer.keras` on another backend, not at all
    without TensorFlow."""
    import keras

    from albert_keras.lazy_imports import installed

    path = os.path.join(args.output_dir, "savedmodel")
    if keras.backend.backend() == "tensorflow":
        export_text_model(
            model.backbone, vocab, args.lowercase, args.max_seq_length, path
        )
        return "savedmodel/ (text in), "
    if not installed("tensorflow"):
        print("No savedmodel/ (text in): TensorFlow is not installed.", flush=True)
        return ""
    from albert_keras.quiet_start import run_in_tensorflow_process

    code = (
        "import sys, keras; from albert_keras.pretraining.pretrain_outputs import "
        "export_text_model as e; m = keras.saving.load_model(sys.argv[1], "
        "compile=False); e(m.backbone, sys.argv[2], sys.argv[3] == 'True', "
        "int(sys.argv[4]), sys.argv[5])"
    )
    pretrainer = os.path.join(args.output_dir, "pretrainer.keras")
    options = [pretrainer, vocab, str(args.lowercase), str(args.max_seq_length), path]
    run_in_tensorflow_process(code, options)
    return "savedmodel/ (text in), "


def export_text_model(backbone, vocab, lowercase, sequence_length, path):
    """Writes `path`: `backbone` with the tokenizer of `vocab`, text in (a
    SavedModel, atomically). TensorFlow backend."""
    import albert_keras.models  # noqa: F401  (registers every task model)
    from albert_keras.atomic_files import save_atomically
    from albert_keras.models import with_tokenizer
    from albert_keras.tokenizers import load_tokenizer

    tokenizer = load_tokenizer(vocab, lowercase=lowercase)
    text_model = with_tokenizer(backbone, tokenizer, sequence_length)
    save_atomically(path, lambda p: text_model.export(p, verbose=False))
