"""benchmarks/bench_pretrain_jax.py: pretraining on JAX with TensorFlow absent."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
RUN = """
import runpy, sys
sys.modules["tensorflow"] = None  # as on a GPU machine with JAX only
sys.argv = ["bench_pretrain_jax.py"] + sys.argv[1:]
runpy.run_path(sys.argv[0].replace("bench", "benchmarks/bench", 1), run_name="__main__")
"""


def test_pretrains_on_jax_without_tensorflow(tmp_path):
    if importlib.util.find_spec("jax") is None:
        pytest.fail("jax is part of the test extras: pip install -e '.[test]'")
    from albert_keras.sample_text import read_paragraphs

    paragraphs = read_paragraphs()
    train, held_out = tmp_path / "train.txt", tmp_path / "held_out.txt"
    # Documents of 4 paragraphs (a blank line between documents).
    docs = ["\n".join(paragraphs[i : i + 4]) for i in range(0, 400, 4)]
    train.write_text("\n\n".join(docs[:75]) + "\n", encoding="utf-8")
    held_out.write_text("\n\n".join(docs[75:]) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    args = [
        "--input", str(train), "--eval-input", str(held_out),
        "--output-dir", str(out), "--preset", "albert_tiny",
        "--seq-length", "64", "--predictions", "10", "--dupe-factor", "2",
        "--split", "2", "--workers", "2", "--split-sentences",
        "--batch", "16", "--steps", "60", "--steps-per-execution", "5",
        "--epoch-steps", "20", "--learning-rate", "0.03",
        "--dtype", "mixed_bfloat16",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", RUN, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == "jax" and summary["steps"] == 60
    losses = [h["mlm_loss"] for h in summary["history"]]
    assert len(losses) == 3 and losses[-1] < losses[0] - 0.2, losses
    held = summary["held_out"]
    assert held["instances"] > 40 and 0 <= held["sop_accuracy"] <= 1
    assert (out / "curves.png").stat().st_size > 1000
    # The float32 .keras loads here (TensorFlow) and reproduces the held-out
    # MLM accuracy the JAX run measured, on the same instances.
    import keras

    from albert_keras import AlbertPretrainer
    from albert_keras.pretraining.pretraining_data import create_pretraining_arrays

    model = keras.saving.load_model(out / "pretrainer.keras")
    features, _ = create_pretraining_arrays(
        [str(held_out)],
        max_seq_length=64,
        max_predictions_per_seq=10,
        split_sentences=True,
        seed=summary["settings"]["seed"] + 1,
        verbose=False,
    )
    x, y = AlbertPretrainer.features_to_xy(features)
    model.compile()
    ours = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
    assert abs(ours["mlm_accuracy"] - held["mlm_accuracy"]) < 1e-4
    assert np.isclose(ours["sop_accuracy"], held["sop_accuracy"], atol=1e-4)


def test_hf_reference_trains_a_model_of_the_same_size(tmp_path):
    """`--reference hf`: transformers' AlbertForPreTraining built from our config
    (`hf_config_dict`) has our parameter count and trains on the same batches."""
    for name in ("torch", "transformers"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (.ci/run installs it)")
    from albert_keras.sample_text import read_paragraphs

    paragraphs = read_paragraphs()
    train = tmp_path / "train.txt"
    docs = ["\n".join(paragraphs[i : i + 4]) for i in range(0, 200, 4)]
    train.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    args = [
        "--input", str(train), "--output-dir", str(out), "--preset", "albert_tiny",
        "--seq-length", "64", "--predictions", "10", "--dupe-factor", "1",
        "--split-sentences", "--batch", "16", "--steps", "10",
        "--steps-per-execution", "5", "--epoch-steps", "10",
        "--reference", "hf", "--reference-steps", "3",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", RUN, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    reference = summary["reference"]
    assert reference["parameters"] == summary["parameters"] == 310242
    assert reference["steps"] == 3 and reference["seq_per_s"] > 0
    assert summary["ratio"] == summary["seq_per_s"] / reference["seq_per_s"]
    assert "ours / HF" in result.stdout
