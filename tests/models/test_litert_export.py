"""LiteRT export: the interpreter gives Keras's logits, the shared block is stored once.

Six layers share one block, so a file that stored the block per layer would
be about 5x the parameter bytes; ours must stay under 1.1x.
"""

import os

import numpy as np
import pytest
from albert_test_case import max_abs_diff, micro_config, random_inputs
from numpy_ops import randomize

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertPretrainer
from albert_keras.models.litert_export import export_litert

Interpreter = pytest.importorskip("ai_edge_litert.interpreter").Interpreter

CONFIG = micro_config(
    vocab_size=1000,
    embedding_size=64,
    hidden_size=256,
    num_hidden_layers=6,
    num_attention_heads=4,
    intermediate_size=512,
    max_position_embeddings=64,
)
# Dynamic-range int8 (int8 weights, activations quantized on the fly at run
# time): max abs diff of the logits within 10% of the largest float32 logit
# (measured: 5.6%; Keras's own int8 `quantize` of the same model: 8.0%).
INT8_RELATIVE_TOLERANCE = 0.1


@pytest.fixture(scope="module")
def classifier():
    model = AlbertClassifier(AlbertBackbone(CONFIG), num_classes=3)
    randomize(model, seed=7, scale=0.05)
    return model


@pytest.fixture(scope="module")
def float_file(classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("litert")
    return export_litert(classifier, str(folder / "float32.tflite"))


def run_interpreter(path, inputs):
    runner = Interpreter(model_path=path).get_signature_runner("serving_default")
    return runner(**inputs)


def test_float32_and_int8_files_match_keras_and_store_the_block_once(
    classifier, float_file, tmp_path
):
    x = random_inputs(batch=3, length=20, vocab=1000)
    expected = np.asarray(classifier(x, training=False)["logits"])
    parameter_bytes = 4 * classifier.count_params()

    float_size = os.path.getsize(float_file)
    assert float_size < 1.1 * parameter_bytes, (float_size, parameter_bytes)
    logits = run_interpreter(float_file, x)["logits"]
    assert max_abs_diff(logits, expected) < 1e-4

    int8_path = export_litert(
        classifier, str(tmp_path / "int8.tflite"), quantization="dynamic_int8"
    )
    # One byte per weight, plus what the float32 file holds besides weights.
    graph_bytes = float_size - parameter_bytes
    int8_size = os.path.getsize(int8_path)
    assert int8_size < 1.1 * parameter_bytes / 4 + graph_bytes, int8_size
    logits = run_interpreter(int8_path, x)["logits"]
    diff = max_abs_diff(logits, expected)
    assert 0 < diff < INT8_RELATIVE_TOLERANCE * np.max(np.abs(expected)), diff
    assert os.listdir(tmp_path) == ["int8.tflite"]  # no temporary left


def test_another_length_and_batch_run_in_the_same_file(classifier, float_file):
    for batch, length in ((1, 5), (4, 64)):
        x = random_inputs(batch=batch, length=length, vocab=1000, seed=batch)
        expected = classifier(x, training=False)["logits"]
        logits = run_interpreter(float_file, x)["logits"]
        assert max_abs_diff(logits, expected) < 1e-4


def test_bad_requests_say_what_to_do(classifier, tmp_path):
    with pytest.raises(ValueError, match="Allowed: None, 'dynamic_int8'"):
        export_litert(classifier, str(tmp_path / "m.tflite"), quantization="int4")
    with pytest.raises(ValueError, match="ends with .tflite"):
        export_litert(classifier, str(tmp_path / "m.keras"))
    pretrainer = AlbertPretrainer(AlbertBackbone(micro_config()))
    with pytest.raises(ValueError, match="Export a classifier"):
        export_litert(pretrainer, str(tmp_path / "m.tflite"))
    quantized = AlbertClassifier(AlbertBackbone(micro_config()), num_classes=2)
    quantized.quantize("int8")
    with pytest.raises(ValueError, match='quantization="dynamic_int8"'):
        export_litert(quantized, str(tmp_path / "m.tflite"))
    assert os.listdir(tmp_path) == []


def test_cli_exports_a_fine_tuned_classifier_and_refuses_others(tmp_path, capsys):
    from albert_keras.cli import main

    small = AlbertClassifier(AlbertBackbone(micro_config()), num_classes=2)
    small.save(str(tmp_path / "best.keras"))
    assert main(["export", "--model", str(tmp_path), "--quantize", "int8"]) == 0
    out = capsys.readouterr().out
    assert os.path.isfile(tmp_path / "best-int8.tflite"), out
    assert "LiteRT vs Keras" in out and "max abs diff" in out
    assert "int32 [batch, length] with length <= 16 (longer fails" in out

    small.quantize("int8")
    small.save(str(tmp_path / "int8.keras"))
    assert main(["export", "--model", str(tmp_path / "int8.keras")]) == 2
    err = capsys.readouterr().err
    assert "int8.keras is already quantized" in err
    assert "export the float32 model with --quantize int8" in err

    assert main(["export", "--model", str(tmp_path), "--format", "onnx"]) == 2
    assert "Unknown --format 'onnx'. Allowed: litert" in capsys.readouterr().err
    AlbertPretrainer(AlbertBackbone(micro_config())).save(str(tmp_path / "p.keras"))
    assert main(["export", "--model", str(tmp_path / "p.keras")]) == 2
    err = capsys.readouterr().err
    assert "holds a AlbertPretrainer, not an AlbertClassifier" in err
    assert main(["export", "--model", str(tmp_path / "none.keras")]) == 2
    assert "is neither a .keras file nor a folder" in capsys.readouterr().err
    os.makedirs(tmp_path / "empty")
    assert main(["export", "--model", str(tmp_path / "empty")]) == 2
    assert (
        "'" + str(tmp_path / "empty") + "' has no best.keras" in capsys.readouterr().err
    )


def test_cli_exports_a_token_classifier(tmp_path, capsys):
    """A tag per token: logits [batch, length, tags] from the LiteRT file."""
    from albert_keras import AlbertTokenClassifier
    from albert_keras.cli import main

    tagger = AlbertTokenClassifier(AlbertBackbone(micro_config()), num_classes=5)
    tagger.save(str(tmp_path / "best.keras"))
    assert main(["export", "--model", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "read a word's tag at its first piece" in out, out
    x = random_inputs(batch=2, length=12, vocab=60)
    logits = run_interpreter(str(tmp_path / "best.tflite"), x)["logits"]
    assert logits.shape == (2, 12, 5)
    assert max_abs_diff(logits, tagger(x, training=False)["logits"]) < 1e-4


def test_cli_points_to_export_litert_only_for_models_it_takes(tmp_path, capsys):
    """A multiple-choice model was sent to `export_litert`, which refuses it."""
    from albert_keras import AlbertMultipleChoice, AlbertSpanQA
    from albert_keras.cli import main

    AlbertMultipleChoice(AlbertBackbone(micro_config())).save(str(tmp_path / "c.keras"))
    assert main(["export", "--model", str(tmp_path / "c.keras")]) == 2
    err = capsys.readouterr().err
    assert "holds a AlbertMultipleChoice, not an AlbertClassifier" in err, err
    assert "export_litert" not in err, err
    assert "token_ids [batch, 4, length]" in err and "no LiteRT export" in err, err

    AlbertSpanQA(AlbertBackbone(micro_config())).save(str(tmp_path / "s.keras"))
    assert main(["export", "--model", str(tmp_path / "s.keras")]) == 2
    err = capsys.readouterr().err
    assert "albert_keras.models.litert_export.export_litert" in err, err


def test_a_mixed_precision_model_exports_in_float32(tmp_path):
    """A `mixed_bfloat16` model failed in the converter ("Could not translate
    MLIR to FlatBuffer ... 'tf.MatMul'"): LiteRT has no bfloat16 matmul. Its
    float32 variables now export as the float32 model's."""
    mixed = AlbertClassifier(
        AlbertBackbone(micro_config(), dtype="mixed_bfloat16"), num_classes=2
    )
    randomize(mixed, seed=3, scale=0.1)
    path = export_litert(mixed, str(tmp_path / "mixed.tflite"))
    reference = AlbertClassifier(AlbertBackbone(micro_config()), num_classes=2)
    reference.set_weights(mixed.get_weights())
    x = random_inputs(batch=2, length=8, vocab=60)
    logits = run_interpreter(path, x)["logits"]
    assert max_abs_diff(logits, reference(x)["logits"]) < 1e-5
    assert mixed.dtype_policy.name == "float32"  # the task model's own
    assert mixed.backbone.dtype_policy.name == "mixed_bfloat16"  # left as it was
