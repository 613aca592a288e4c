"""`albert-keras export`: a fine-tuned classifier -> a LiteRT `.tflite` file."""

from __future__ import annotations

import os

from albert_keras.cli_help import DefaultsHelpFormatter

FORMATS = ("litert",)
QUANTIZE = {"none": None, "int8": "dynamic_int8"}


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "export",
        formatter_class=DefaultsHelpFormatter,
        help="write a fine-tuned classifier as a LiteRT .tflite file (token ids in)",
        description=(
            "Convert the best.keras of `albert-keras finetune` (a classifier) to "
            "a LiteRT .tflite file that runs in the ai-edge-litert interpreter: "
            "signature serving_default, inputs token_ids, segment_ids, "
            "padding_mask (int32 [batch, length]), output logits. Tokenize with "
            "SentencePiece outside the file (TF Text's ops are not LiteRT "
            "builtins). The shared transformer block is stored once. Then, if "
            "ai-edge-litert is installed, run the file on a random batch and "
            "print its max abs diff from Keras."
        ),
    )
    parser.add_argument(
        "--model",
        required=True,
        help="the --output-dir of `albert-keras finetune`, or a classifier .keras",
    )
    parser.add_argument(
        "--format",
        default="litert",
        help="litert (default: %(default)s; the only one: a text-in TensorFlow "
        "SavedModel is `model.export(path)` of the text model)",
    )
    parser.add_argument(
        "--output",
        help="the .tflite to write (default: beside the model, <name>.tflite or "
        "<name>-int8.tflite)",
    )
    parser.add_argument(
        "--quantize",
        default="none",
        choices=sorted(QUANTIZE),
        help="int8: dynamic-range (int8 weights, ~1/4 of the size; activations "
        "quantized on the fly)",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="skip the interpreter run that compares the file with Keras",
    )
    parser.set_defaults(run=run_export)


def run_export(args):
    import keras

    if keras.backend.backend() != "tensorflow":
        return _in_tensorflow_process(args)
    from albert_keras.models.albert_classifier import AlbertClassifier
    from albert_keras.models.albert_token_classifier import AlbertTokenClassifier
    from albert_keras.models.litert_export import export_litert
    from albert_keras.tasks.prediction_run import fine_tuned_model_path

    if args.format not in FORMATS:
        raise ValueError(
            f"Unknown --format {args.format!r}. Allowed: {', '.join(FORMATS)}. A "
            "text-in TensorFlow SavedModel is `model.export(path)` of the text "
            "model (albert_keras.models.with_tokenizer)."
        )
    path = fine_tuned_model_path(args.model)
    model = keras.saving.load_model(path, compile=False)
    model = getattr(model, "task_model", model)  # a text-in model's classifier
    if not isinstance(model, (AlbertClassifier, AlbertTokenClassifier)):
        raise ValueError(_not_a_classifier(model, path))
    _check_float(model, path)
    stem = os.path.splitext(path)[0]
    suffix = "-int8.tflite" if args.quantize == "int8" else ".tflite"
    output = args.output or stem + suffix
    export_litert(model, output, quantization=QUANTIZE[args.quantize])
    size, parameter_bytes = os.path.getsize(output), 4 * model.count_params()
    print(
        f"Wrote {output}: {size / 1e6:.1f} MB ({size / parameter_bytes:.2f}x the "
        f"{parameter_bytes / 1e6:.1f} MB of float32 parameters), "
        f"quantize={args.quantize}"
    )
    config = model.backbone.config
    packing = (
        "tokenize each word alone, [CLS] pieces [SEP], and read a word's tag at "
        "its first piece (its second after a bare \u2581)"
        if isinstance(model, AlbertTokenClassifier)
        else "pack [CLS] a [SEP] b [SEP]"
    )
    print(
        "Inputs: token_ids, segment_ids, padding_mask, int32 [batch, length] with "
        f"length <= {config.max_position_embeddings} (longer fails in the "
        f"interpreter): {packing} as the run did, with the vocabulary beside "
        "the model and its sequence length (settings.json)."
    )
    if not args.no_check:
        _check(model, output)
    return 0


def _not_a_classifier(model, path):
    """The refusal of another model: `export_litert` named only where it
    takes the model (a multiple-choice model was sent there, to be refused)."""
    from albert_keras.models.litert_export import input_shapes, takes_token_ids

    if takes_token_ids(model):
        other = (
            "export it in Python with "
            "albert_keras.models.litert_export.export_litert(model, path)"
        )
    else:
        other = (
            f"this model takes {input_shapes(model)}, not the token_ids, "
            "segment_ids and padding_mask [batch, length] of our LiteRT files, "
            "so it has no LiteRT export"
        )
    return (
        f"{path} holds a {type(model).__name__}, not an AlbertClassifier or "
        "AlbertTokenClassifier: `export --format litert` takes the best.keras "
        f"of `albert-keras finetune` on a classification or tagging task; {other}."
    )


def _check_float(model, path):
    """An int8 `.keras` is refused with the flag that makes an int8 file."""
    from albert_keras.models.quantized_layers import quantized_layer_modes

    quantized = list(quantized_layer_modes(model))
    if quantized:
        raise ValueError(
            f"{path} is already quantized (e.g. {quantized[0]!r}), which the "
            "LiteRT converter cannot take: export the float32 model with "
            "--quantize int8 instead."
        )


def _in_tensorflow_process(args):
    """The same command on the TensorFlow backend, whose graph the LiteRT
    converter reads (JAX and torch models convert through a .keras file)."""
    from albert_keras.quiet_start import rerun_on_tensorflow

    return rerun_on_tensorflow(args.argv)


def _check(model, output):
    """Runs the file on random ids and prints its max abs diff from Keras."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        print("Not checked: `pip install ai-edge-litert` to run the file.")
        return
    import numpy as np

    config = model.backbone.config
    rng = np.random.default_rng(0)
    length = min(128, config.max_position_embeddings)
    inputs = {
        "token_ids": rng.integers(0, config.vocab_size, (2, length), "int32"),
        "segment_ids": np.zeros((2, length), "int32"),
        "padding_mask": np.ones((2, length), "int32"),
    }
    inputs["padding_mask"][1, length // 2 :] = 0
    runner = Interpreter(model_path=output).get_signature_runner("serving_default")
    logits = runner(**inputs)["logits"]
    expected = np.asarray(model(inputs, training=False)["logits"])
    print(
        f"LiteRT vs Keras on 2 x {length} random ids: max abs diff of the logits "
        f"{np.max(np.abs(logits - expected)):.2e} (largest logit "
        f"{np.max(np.abs(expected)):.2e})"
    )
