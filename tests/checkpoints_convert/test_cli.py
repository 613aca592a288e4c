"""albert-convert end to end: official -> .keras (+ SavedModel) -> official."""

import os

import keras
import numpy as np
from albert_test_case import max_abs_diff
from conftest import load_outputs, official_inputs

from checkpoints_convert.cli import main


def test_convert_and_back(official, tmp_path, capsys):
    folder = official["l5_g2_inner2"]
    out = str(tmp_path / "model.keras")
    assert main([folder, "--output", out, "--saved-model", str(tmp_path / "sm")]) == 0
    assert "loaded 80 variables" in capsys.readouterr().err
    model = keras.saving.load_model(out)
    outputs = load_outputs(folder)
    x = official_inputs(outputs)
    mlm = np.reshape(np.asarray(model(x)["mlm_logits"]), outputs["mlm_logits"].shape)
    assert max_abs_diff(mlm, outputs["mlm_logits"]) <= 1e-5
    assert os.path.isfile(tmp_path / "sm" / "saved_model.pb")
    # And back to the official format: identical variables.
    assert main([out, "--to-official", "--output", str(tmp_path / "back")]) == 0
    from checkpoints_convert import OfficialCheckpoint

    original, back = (
        OfficialCheckpoint(folder),
        OfficialCheckpoint(str(tmp_path / "back")),
    )
    assert set(back.names) == {n for n in original.names}
    for name in back.names:
        assert np.array_equal(original.read(name), back.read(name)), name


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    assert main([str(tmp_path / "missing"), "--output", str(tmp_path / "m.keras")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("albert-convert: error: No checkpoint at")
    assert "Traceback" not in err


def test_text_model_with_the_release_vocabulary(official, tmp_path):
    import shutil

    import tensorflow as tf

    from albert_keras.sample_text import SPM_MODEL_PATH

    release = tmp_path / "release"
    shutil.copytree(official["v1_dropout_classifier"], release)
    # Our 8k model stands in for 30k-clean.model; "the" is piece 7, inside the
    # test checkpoint's vocabulary of 97.
    shutil.copy(SPM_MODEL_PATH, release / "30k-clean.model")
    out = str(tmp_path / "text.keras")
    args = [str(release), "--model", "classifier", "--output", out]
    assert (
        main(args + ["--text-model", "12", "--saved-model", str(tmp_path / "sm")]) == 0
    )
    model = keras.saving.load_model(out)
    tokens = model.tokenizer(tf.constant(["the"]))
    assert tokens.to_list()[0] and max(tokens.to_list()[0]) < 97
    logits = model(tf.constant(["the"]))["logits"]
    assert logits.shape == (1, 3)
    loaded = tf.saved_model.load(str(tmp_path / "sm"))  # keep it alive
    served = loaded.serve(tf.constant(["the"]))
    assert max_abs_diff(served["logits"], logits) < 1e-5
    assert main(args + ["--model", "backbone", "--text-model", "12"]) == 2
