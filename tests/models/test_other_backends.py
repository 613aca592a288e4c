"""The layers are `keras.ops` only: JAX and PyTorch give the TensorFlow numbers.

The checks of each backend run in one fresh Python (`backend_checks.py`,
started once per module by `backend_runs`); the tests read its report. JAX
without TensorFlow needs a Python of its own.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from albert_test_case import fast_xla_flags, max_abs_diff, random_inputs
from numpy_ops import randomize

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer

SCRIPT = os.path.join(os.path.dirname(__file__), "backend_checks.py")
# What each backend's one fresh Python checks (backend_checks.py), in order.
CHECKS = {
    "jax": [
        "forward_all", "forward_ffn", "squad_predict", "text_model", "fit",
        "task_export", "finetune", "failed_loops", "input_ranges", "fill_mask",
        "accumulation", "pretrain_accumulation", "eval_every", "remat_dropout",
        "bi_encoder",
    ],
    "torch": [
        "forward_all", "forward_ffn", "squad_predict", "text_model", "fit",
        "finetune", "accumulation", "pretrain_accumulation", "bi_encoder",
    ],
}  # fmt: skip
# TensorFlow quiet; XLA's CPU code unoptimized: it compiles in a fraction of
# the time, and these tiny models run about as fast.
QUIET_FAST_XLA = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "XLA_FLAGS": fast_xla_flags(),
}


def _require(backend):
    if backend == "jax" and importlib.util.find_spec("jax") is None:
        pytest.fail("jax is part of the test extras: pip install -e '.[test]'")
    if backend == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed (pip install torch)")


def _write_forward_inputs(work):
    """Random weights and inputs for `forward_*`; TensorFlow's outputs."""
    expected = {}
    x = random_inputs(batch=3, length=9, vocab=70)
    x["mask_positions"] = np.array([[1, 2], [3, 4], [0, 5]], "int32")
    np.savez(work / "x.npz", **x)
    for sharing in ("all", "ffn"):
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
        expected[sharing] = (model(x), model.backbone(x))
        (work / f"config_{sharing}.json").write_text(json.dumps(config.to_dict()))
        weights = {f"w{i}": w for i, w in enumerate(model.get_weights())}
        np.savez(work / f"w_{sharing}.npz", **weights)
    expected["bi_encoder"] = _bi_encoder_outputs(model.backbone, x, work)
    return expected


def _bi_encoder_outputs(backbone, x, work):
    """TensorFlow's `AlbertBiEncoder` embeddings and `InBatchNegativesLoss`
    on two texts per example (the inputs and their reverse), the backbone's
    weights saved for the other backend."""
    from albert_keras.models import AlbertBiEncoder
    from albert_keras.training import InBatchNegativesLoss

    keys = ("token_ids", "segment_ids", "padding_mask")
    pairs = {k: np.stack([x[k], x[k][::-1]], axis=1) for k in keys}
    np.savez(work / "bi_x.npz", **pairs)
    weights = {f"w{i}": w for i, w in enumerate(backbone.get_weights())}
    np.savez(work / "bi_w.npz", **weights)
    embeddings = AlbertBiEncoder(backbone)(pairs)["embeddings"]
    loss = InBatchNegativesLoss(scale=5.0, symmetric=True)([0, 1, 1], embeddings)
    return np.asarray(embeddings), float(loss)


@pytest.fixture(scope="module")
def backend_runs(tmp_path_factory):
    """`backend_runs(backend)`: (work folder, report, TensorFlow's forward
    outputs) of one fresh Python that ran CHECKS[backend], run once."""
    runs = {}

    def run(backend):
        _require(backend)
        if backend not in runs:
            work = tmp_path_factory.mktemp(f"checks_{backend}")
            expected = _write_forward_inputs(work)
            env = dict(os.environ, KERAS_BACKEND=backend, **QUIET_FAST_XLA)
            result = subprocess.run(
                [sys.executable, SCRIPT, str(work), *CHECKS[backend]],
                capture_output=True,
                text=True,
                env=env,
                timeout=900,
            )
            failed = result.stdout[-2000:] + result.stderr[-3000:]
            report = (work / "report.json").exists() and json.loads(
                (work / "report.json").read_text()
            )
            # Kept when it failed too: each test fails, none runs it again.
            runs[backend] = (work, result.returncode, failed, report, expected)
        work, returncode, failed, report, expected = runs[backend]
        assert returncode == 0, failed
        return work, report, expected

    return run


def _check(backend_runs, backend, name):
    """The work folder and the result of check `name`, which must not raise."""
    work, report, _ = backend_runs(backend)
    assert report["backend"] == backend
    assert "error" not in report[name], report[name]["error"]
    return work, report[name]


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("sharing", ["all", "ffn"])
def test_other_backend_matches_tensorflow(backend_runs, sharing, backend):
    work, result = _check(backend_runs, backend, f"forward_{sharing}")
    # Built with no compiled sampler: on JAX each new shape would cost an XLA
    # compilation (HostTruncatedNormal draws on the host).
    assert result["compiled_samplers"] == 0, result
    expected, expected_seq = backend_runs(backend)[2][sharing]
    out = np.load(work / f"out_{sharing}.npz")
    for key in ("sequence_output", "pooled_output"):
        assert max_abs_diff(out[key], expected_seq[key]) < 1e-5
    for key in ("mlm_logits", "sop_logits"):
        assert max_abs_diff(out[key], expected[key]) < 1e-4


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_bi_encoder_and_its_loss_match_tensorflow(backend_runs, backend):
    """`--task embed`'s model and loss: TensorFlow's numbers, and a fit lowers
    the loss."""
    work, result = _check(backend_runs, backend, "bi_encoder")
    embeddings, loss = backend_runs(backend)[2]["bi_encoder"]
    assert max_abs_diff(np.load(work / "bi_out.npz")["embeddings"], embeddings) < 1e-5
    assert abs(result["loss"] - loss) < 1e-5, (result["loss"], loss)
    assert result["losses"][-1] < result["losses"][0], result["losses"]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_task_models_fit_on_other_backends(backend_runs, backend):
    _, result = _check(backend_runs, backend, "fit")
    losses = result["losses"]
    assert losses[-1] < 0.7 * losses[0], losses
    assert result["end_top_index_shape"] == [32, 4]


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
    env = dict(os.environ, KERAS_BACKEND="jax", **QUIET_FAST_XLA)
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
def test_finetune_command_on_other_backends(backend_runs, backend):
    """`KERAS_BACKEND=jax|torch albert-keras finetune`: the tokenizer and packer
    take TensorFlow strings under that backend, torch runs eagerly (not
    minutes of `torch.compile`), and a TensorFlow process writes savedmodel/,
    which serves the run's best.keras. On JAX, `export` (LiteRT) runs too."""
    work, result = _check(backend_runs, backend, "finetune")
    out = work / "run"
    # 46 s on a 2-core CPU; with torch.compile, torch took over 7 minutes.
    assert result["code"] == 0, result["stdout"][-2000:]
    assert "savedmodel/" in result["stdout"]
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
    assert result["export_code"] == 0
    assert (out / "best.tflite").stat().st_size > 0
    assert "export on the TensorFlow backend" in result["litert_message"]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_squad_v2_predicts_without_start_positions(backend_runs, backend):
    """Keras on JAX predicts through `stateless_call`, not `__call__`: the
    start position inference may leave out is filled in `call` too."""
    _, result = _check(backend_runs, backend, "squad_predict")
    assert result["close"]  # end_top_log_probs, atol 1e-6
    assert result["end_top_index_shape"] == [3, 4]


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_text_model_on_other_backends_says_tensorflow(backend_runs, backend):
    """A text model's tokenizer is TensorFlow ops: on JAX and torch it failed
    at its first call with a backend's dtype error; now building it names
    the TensorFlow backend and the token-id way."""
    _, result = _check(backend_runs, backend, "text_model")
    messages = "\n".join(result["messages"])
    assert messages.count("KERAS_BACKEND=tensorflow") == 2, messages
    assert f"backend is {backend}" in messages


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_gradient_accumulation_on_other_backends(backend_runs, backend):
    """2 batches of 8 per update train as batches of 16 (XLA on JAX)."""
    _, result = _check(backend_runs, backend, "accumulation")
    for name in ("adamw", "lamb"):
        assert result[name]["updates"] == [4, 4], result
        assert result[name]["2x8"] < 1e-6, result


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_pretraining_accumulation_on_other_backends(backend_runs, backend):
    """`run_pretraining(gradient_accumulation_steps=2)` on `PretrainingBatches`:
    the weights of batches of 8, steps in updates (Keras' step is an array
    there, read through `keras.ops`)."""
    _, result = _check(backend_runs, backend, "pretrain_accumulation")
    assert result["steps"] == [4, 4], result
    assert result["2x4"] < 1e-6, result


def test_task_export_on_jax(backend_runs):
    """README's `task.fit(...); task.export("savedmodel")` on JAX: the text
    model is TensorFlow's, so `export` runs in a TensorFlow process from the
    folder `fit` wrote (it failed with a dtype error, then a backend one)."""
    work, _ = _check(backend_runs, "jax", "task_export")
    run, saved = work / "task_run", work / "task_savedmodel"
    assert (saved / "saved_model.pb").exists()
    assert not (run / "savedmodel").exists()  # export=False: only the one asked


def test_evaluations_every_n_updates_on_jax(backend_runs):
    """`--max-steps 3 --eval-every 1` on JAX: dev scored after each update,
    over two epochs of 2 batches; the best evaluation's model kept."""
    _, result = _check(backend_runs, "jax", "eval_every")
    assert result["steps"] == [1, 2, 3], result
    assert result["iterations"] == result["best_step"], result


def test_gradient_checkpointing_with_dropout_on_jax(backend_runs):
    """Blocks with dropout recomputed under `jax.checkpoint` fine-tune (their
    dropout states are returned from it, not set inside), to the numbers of
    the run without it."""
    _, result = _check(backend_runs, "jax", "remat_dropout")
    assert len(result["losses"]) == 2 and np.all(np.isfinite(result["losses"]))
    assert np.max(np.abs(np.subtract(result["plain"], result["losses"]))) < 1e-6
    assert result["max_diff"] < 1e-6, result


def test_fill_mask_command_on_jax(backend_runs):
    """`KERAS_BACKEND=jax albert-keras fill-mask` reruns itself on TensorFlow:
    the candidates of the model saved on JAX, as TensorFlow gives them here."""
    import json

    import keras

    from albert_keras.models import with_tokenizer

    work, result = _check(backend_runs, "jax", "fill_mask")
    assert result["code"] == 0
    with open(work / "fill.jsonl") as f:
        got = json.loads(f.readline())["masks"]
    folder = work / "pretrain_run"
    model = keras.saving.load_model(str(folder / "pretrainer.keras"))
    expected = with_tokenizer(model, str(folder / "vocab.model"), 128)
    expected = expected.fill_mask("Emma was [MASK] of it.")[0]
    assert [c["token_id"] for c in got[0]] == [c["token_id"] for c in expected[0]]


def test_ids_outside_the_tables_are_refused_on_jax(backend_runs):
    """JAX clamps a gather index that is too large and wraps a negative one:
    these calls returned MLM logits of the wrong tokens, with no error."""
    _, messages = _check(backend_runs, "jax", "input_ranges")
    for name, message in messages.items():
        assert message.startswith(("mask_positions holds", "token_ids holds")), name
    assert "holds -1 at [0, 0]" in messages["negative position, call"]
    assert "from 0 to 3 (the sequence length" in messages["position past the end, call"]
    assert "vocabulary size is" in messages["token id past the vocabulary, predict"]


def test_failed_loops_on_jax_leave_the_weights(backend_runs):
    """Keras's JAX trainer empties the variables during `fit`, `evaluate` and
    `predict`; one that raised left them empty ("'NoneType' object is not
    callable" at every later call). Now the logits are unchanged after each
    failure and the model still trains; after a `train_on_batch` and
    `set_weights`, a failed `predict` or `fit` put the batch's weights back."""
    _, results = _check(backend_runs, "jax", "failed_loops")
    for jit in ("jit", "no_jit"):
        result = results[jit]
        messages = result["messages"]
        assert "max_position_embeddings" in messages[0], (jit, messages)
        assert "max_position_embeddings" in messages[1], (jit, messages)
        assert messages[2] != "no error", jit
        assert result["diffs"] == [0.0, 0.0, 0.0, 0.0, 0.0], jit
        assert np.isfinite(result["loss"]), jit


def test_a_fit_without_jit_on_jax_holds_one_copy_of_the_weights(backend_runs):
    """Without `jit_compile` nothing is donated: the values held for a failed
    loop stayed alive beside the new ones for the whole `fit`, twice the
    weights' memory. Now none of them outlives the first step."""
    _, results = _check(backend_runs, "jax", "failed_loops")
    assert results["alive"]["weights"] > 20
    assert results["alive"]["alive"] == [0, 0], results["alive"]
