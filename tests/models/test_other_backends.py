"""The layers are `keras.ops` only: JAX and PyTorch give the TensorFlow numbers."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from albert_test_case import max_abs_diff, random_inputs
from numpy_ops import randomize

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer

SCRIPT = os.path.join(os.path.dirname(__file__), "backend_forward.py")


def _require(backend):
    if backend == "jax" and importlib.util.find_spec("jax") is None:
        pytest.fail("jax is part of the test extras: pip install -e '.[test]'")
    if backend == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed (pip install torch)")


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("sharing", ["all", "ffn"])
def test_other_backend_matches_tensorflow(tmp_path, sharing, backend):
    _require(backend)
    config = AlbertConfig(
        vocab_size=70,
        embedding_size=8,
        hidden_size=16,
        num_hidden_layers=3,
        num_hidden_groups=1,
        inner_group_num=2,
        num_attention_heads=4,
        intermediate_size=24,
        max_position_embeddings=16,
        sharing=sharing,
    )
    model = AlbertPretrainer(AlbertBackbone(config))
    randomize(model, seed=11, scale=0.3)
    x = random_inputs(batch=3, length=9, vocab=70)
    x["mask_positions"] = np.array([[1, 2], [3, 4], [0, 5]], "int32")
    expected = model(x)
    expected_seq = model.backbone(x)
    (tmp_path / "config.json").write_text(json.dumps(config.to_dict()))
    np.savez(
        tmp_path / "w.npz", **{f"w{i}": w for i, w in enumerate(model.get_weights())}
    )
    np.savez(tmp_path / "x.npz", **x)
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run(
        [
            sys.executable,
            SCRIPT,
            str(tmp_path / "config.json"),
            str(tmp_path / "w.npz"),
            str(tmp_path / "x.npz"),
            str(tmp_path / "out.npz"),
        ],
        check=True,
        env=env,
    )
    out = np.load(tmp_path / "out.npz")
    assert str(out["backend"]) == backend
    for key in ("sequence_output", "pooled_output"):
        assert max_abs_diff(out[key], expected_seq[key]) < 1e-5
    for key in ("mlm_logits", "sop_logits"):
        assert max_abs_diff(out[key], expected[key]) < 1e-4


FIT = """
import keras, numpy as np
JIT = keras.backend.backend() != "torch"  # torch.compile is another matter
from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig, AlbertSquadV2
def backbone():
    return AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=60))
rng = np.random.default_rng(0)
x = {"token_ids": rng.integers(5, 60, (32, 12)).astype("int32"),
     "segment_ids": np.zeros((32, 12), "int32"),
     "padding_mask": np.ones((32, 12), "int32")}
y = (x["token_ids"][:, 0] > 30).astype("int32")
model = AlbertClassifier(backbone(), num_classes=2)
model.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=JIT,
              loss={"logits": keras.losses.SparseCategoricalCrossentropy(True)})
losses = model.fit(x, {"logits": y}, batch_size=8, epochs=8, verbose=0).history["loss"]
model.evaluate(x, {"logits": y}, verbose=0)
assert losses[-1] < 0.7 * losses[0], losses
squad = AlbertSquadV2(backbone(), start_n_top=2, end_n_top=2)
loss, weights = AlbertSquadV2.official_losses()
squad.compile(optimizer="adam", loss=loss, loss_weights=weights, jit_compile=JIT)
x = dict(x, p_mask=np.zeros((32, 12), "int32"),
         start_positions=np.full(32, 3, "int32"))
t = {"start_log_probs": x["start_positions"], "end_log_probs": x["start_positions"],
     "cls_logits": np.zeros(32, "float32")}
squad.fit(x, t, batch_size=8, epochs=1, verbose=0)
assert squad.predict(x, verbose=0)["end_top_index"].shape == (32, 4)
from albert_keras import AlbertPretrainer
pretrainer = AlbertPretrainer(backbone())
pretrainer.compile(optimizer="adam", jit_compile=JIT)
x = {k: x[k] for k in ("token_ids", "segment_ids", "padding_mask")}
x["mask_positions"] = np.tile(np.array([[1, 2]], "int32"), (32, 1))
t = {"mask_ids": x["token_ids"][:, 1:3], "mask_weights": np.ones((32, 2), "float32"),
     "sop_labels": np.zeros(32, "int32")}
pretrainer.fit(x, t, batch_size=8, epochs=1, verbose=0)
print(keras.backend.backend(), "fit ok")
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_task_models_fit_on_other_backends(backend):
    _require(backend)
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", FIT], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{backend} fit ok" in result.stdout


JAX_WITHOUT_TF = """
import sys
sys.modules["tensorflow"] = None  # as on a machine with JAX and no TensorFlow
import keras, numpy as np
import albert_keras  # registers the classes Keras already loaded
from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
from albert_keras.training.optimizers import create_optimizer
out = sys.argv[1]
config = AlbertConfig.from_preset("albert_tiny", vocab_size=60)
rng = np.random.default_rng(0)
ids = rng.integers(5, 60, (32, 12)).astype("int32")
x = {"token_ids": ids, "segment_ids": np.zeros((32, 12), "int32"),
     "padding_mask": np.ones((32, 12), "int32"),
     "mask_positions": np.tile(np.array([[1, 2]], "int32"), (32, 1))}
y = {"mask_ids": ids[:, 1:3], "mask_weights": np.ones((32, 2), "float32"),
     "sop_labels": (ids[:, 0] > 30).astype("int32")}
model = AlbertPretrainer(AlbertBackbone(config, dtype="mixed_bfloat16"))
model.compile(optimizer=create_optimizer("lamb", 3e-2, 40, 4), steps_per_execution=4)
losses = model.fit(x, y, batch_size=8, epochs=10, verbose=0).history["loss"]
assert losses[-1] < 0.85 * losses[0], losses
plain = AlbertPretrainer(AlbertBackbone(config))
plain.set_weights(model.get_weights())
plain.save(out + "/jax.keras")
np.savez(out + "/jax_out.npz", **keras.tree.map_structure(
    keras.ops.convert_to_numpy, plain.predict_on_batch(x)), **x)
print("jax without tensorflow ok")
"""


def test_pretrain_on_jax_without_tensorflow_then_load_here(tmp_path):
    """LAMB + mixed bfloat16 on JAX with TensorFlow absent; the .keras loads here."""
    _require("jax")
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", JAX_WITHOUT_TF, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "jax without tensorflow ok" in result.stdout
    import keras

    model = keras.saving.load_model(tmp_path / "jax.keras")
    saved = np.load(tmp_path / "jax_out.npz")
    x = {k: saved[k] for k in ("token_ids", "segment_ids", "padding_mask")}
    x["mask_positions"] = saved["mask_positions"]
    out = model.predict_on_batch(x)
    for key in ("mlm_logits", "sop_logits"):
        assert max_abs_diff(out[key], saved[key]) < 1e-4


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_finetune_command_on_other_backends(tmp_path, backend):
    """`KERAS_BACKEND=jax|torch albert-keras finetune`: the tokenizer and packer
    take TensorFlow strings under that backend, torch runs eagerly (not
    minutes of `torch.compile`), and a TensorFlow process writes savedmodel/,
    which serves the run's best.keras. On JAX, `export` (LiteRT) runs too."""
    _require(backend)
    data = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tasks")
    data = os.path.join(data, "rt_sentiment")
    out = tmp_path / "run"
    command = [sys.executable, "-m", "albert_keras.cli", "finetune"]
    command += ["--task", "classify", "--init", "albert_tiny", "--epochs", "1"]
    command += ["--train", os.path.join(data, "train.jsonl")]
    command += ["--dev", os.path.join(data, "dev.jsonl"), "--output-dir", str(out)]
    command += ["--max-train-examples", "32", "--max-dev-examples", "16"]
    command += ["--max-seq-length", "32", "--batch-size", "16"]
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    # 46 s on a 2-core CPU; with torch.compile, torch took over 7 minutes.
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "savedmodel/" in result.stdout
    import keras
    import tensorflow as tf

    from albert_keras.models import with_tokenizer
    from albert_keras.tokenizers import load_tokenizer

    texts = ["A gorgeous, witty film.", "Dull.", ""]
    model = keras.saving.load_model(str(out / "best.keras"))
    tokenizer = load_tokenizer(str(out / "austen-8k.model"))
    expected = with_tokenizer(model, tokenizer, 32)(texts)["logits"]
    loaded = tf.saved_model.load(str(out / "savedmodel"))  # kept: owns the weights
    served = loaded.serve(tf.constant(texts))
    assert max_abs_diff(served["logits"], expected) < 1e-5
    assert np.ptp(np.asarray(expected)[:, 0]) > 0  # not one constant row
    if backend != "jax":
        return
    # `export` converts in a TensorFlow process; the Python function says so.
    command = [sys.executable, "-m", "albert_keras.cli", "export"]
    result = subprocess.run(
        [*command, "--model", str(out), "--no-check"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (out / "best.tflite").stat().st_size > 0
    script = (
        "import keras; from albert_keras.models.litert_export import export_litert\n"
        "model = keras.saving.load_model('run/best.keras')\n"
        "try:\n    export_litert(model, 'x.tflite')\n"
        "except ValueError as e:\n    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert "export on the TensorFlow backend" in result.stdout, result.stderr[-2000:]


SQUAD_PREDICT = """
import keras, numpy as np
from albert_keras import AlbertBackbone, AlbertConfig, AlbertSquadV2
config = AlbertConfig.from_preset("albert_tiny", vocab_size=60)
model = AlbertSquadV2(AlbertBackbone(config), start_n_top=2, end_n_top=2)
x = {k: np.ones((3, 8), "int32") for k in ("token_ids", "segment_ids", "padding_mask")}
x["p_mask"] = np.zeros((3, 8), "int32")
out = model.predict(x, batch_size=2, verbose=0)  # no start_positions: 0
same = model.predict(dict(x, start_positions=np.zeros(3, "int32")), verbose=0)
assert np.allclose(out["end_top_log_probs"], same["end_top_log_probs"], atol=1e-6)
print(keras.backend.backend(), "predict ok", out["end_top_index"].shape)
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_squad_v2_predicts_without_start_positions(backend):
    """Keras on JAX predicts through `stateless_call`, not `__call__`: the
    start position inference may leave out is filled in `call` too."""
    _require(backend)
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", SQUAD_PREDICT], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{backend} predict ok (3, 4)" in result.stdout


TEXT_MODEL = """
import keras
from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig, AlbertSpanQA
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
for model in (AlbertClassifier(AlbertBackbone(config), 2),
              AlbertSpanQA(AlbertBackbone(config))):
    try:
        with_tokenizer(model, SPM_MODEL_PATH, 16)
    except ValueError as e:
        print(e)
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_text_model_on_other_backends_says_tensorflow(backend):
    """A text model's tokenizer is TensorFlow ops: on JAX and torch it failed
    at its first call with a backend's dtype error; now building it names
    the TensorFlow backend and the token-id way."""
    _require(backend)
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", TEXT_MODEL], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("KERAS_BACKEND=tensorflow") == 2, result.stdout
    assert f"backend is {backend}" in result.stdout


TASK_EXPORT = """
import sys, keras
from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
rows = [{"text": t, "label": i % 2} for i, t in enumerate(["Fine.", "Dull.", "Witty."])]
task = ClassificationTask(num_classes=2, text_fields=("text",), sequence_length=16)
config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
task.fit(AlbertBackbone(config), rows, rows, sys.argv[1], vocab=SPM_MODEL_PATH,
         epochs=1, batch_size=4, export=False)
task.export(sys.argv[2])
"""


def test_task_export_on_jax(tmp_path):
    """README's `task.fit(...); task.export("savedmodel")` on JAX: the text
    model is TensorFlow's, so `export` runs in a TensorFlow process from the
    folder `fit` wrote (it failed with a dtype error, then a backend one)."""
    _require("jax")
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    run, saved = tmp_path / "run", tmp_path / "savedmodel"
    result = subprocess.run(
        [sys.executable, "-c", TASK_EXPORT, str(run), str(saved)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (saved / "saved_model.pb").exists()
    assert not (run / "savedmodel").exists()  # export=False: only the one asked
