"""albert-convert end to end: official -> .keras (+ SavedModel) -> official."""

import contextlib
import io
import json
import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff
from converter_oracle import BASE_CONFIG, load_outputs, official_inputs

from checkpoints_convert import CheckpointReader, load_official_checkpoint
from checkpoints_convert.cli import main


def test_convert_reload_export_and_back(official, tmp_path, capsys):
    folder = official["l5_g2_inner2"]
    out = str(tmp_path / "model.keras")
    saved = str(tmp_path / "saved_model")
    assert main([folder, "--output", out, "--saved-model", saved]) == 0
    err = capsys.readouterr().err
    assert "AlbertPretrainer: loaded 80 variables" in err
    assert f"wrote {out}" in err and f"wrote SavedModel {saved}" in err

    # The .keras file gives exactly the outputs of the converted model.
    outputs = load_outputs(folder)
    x = official_inputs(outputs)
    reloaded = keras.saving.load_model(out)
    converted = load_official_checkpoint(folder, "pretrainer")
    for key in ("mlm_logits", "sop_logits"):
        assert max_abs_diff(reloaded(x)[key], converted(x)[key]) == 0.0
    mlm = np.reshape(reloaded(x)["mlm_logits"], outputs["mlm_logits"].shape)
    assert max_abs_diff(mlm, outputs["mlm_logits"]) <= 1e-5
    # The SavedModel serves the same numbers.
    exported = tf.saved_model.load(saved)  # kept alive while serving
    served = exported.serve({k: tf.constant(v) for k, v in x.items()})
    assert max_abs_diff(served["sop_logits"], converted(x)["sop_logits"]) <= 1e-6

    # And back: every variable of the official checkpoint, bit for bit.
    back = str(tmp_path / "back")
    assert main([out, "--to-official", "--output", back]) == 0
    err = capsys.readouterr().err
    assert "albert_config.json" in err
    assert "no vocabulary beside" in err and "--vocab" in err  # none beside out
    # With one beside the .keras file (as `albert-keras pretrain` writes), the
    # release gets a copy: `finetune --init` finds it there.
    from albert_keras.sample_text import SPM_MODEL_PATH

    shutil.copy(SPM_MODEL_PATH, tmp_path / "vocab.model")
    again = str(tmp_path / "again")
    assert main([out, "--to-official", "--output", again]) == 0
    with (
        open(os.path.join(again, "vocab.model"), "rb") as f,
        open(SPM_MODEL_PATH, "rb") as g,
    ):
        assert f.read() == g.read()
    original, ours = CheckpointReader(folder), CheckpointReader(back)
    assert sorted(ours.names) == sorted(original.names)
    for name in ours.names:
        np.testing.assert_array_equal(ours.read(name), original.read(name), name)


def test_user_errors_exit_2_without_traceback(official, tmp_path, capsys):
    out = str(tmp_path / "m.keras")
    assert main([str(tmp_path / "missing"), "--output", out]) == 2
    err = capsys.readouterr().err
    assert "albert-convert: error: No checkpoint at" in err
    assert "Traceback" not in err
    config = tmp_path / "bad_config.json"
    config.write_text(json.dumps({**BASE_CONFIG, "vocab_size": 7}))
    assert main([official["all_shared"], "--output", out, "--config", str(config)])
    assert "config `vocab_size` is 7 here, 100" in capsys.readouterr().err
    assert main([official["all_shared"], "--output", str(tmp_path / "m.h5")]) == 2
    assert "--output must be a .keras file" in capsys.readouterr().err
    assert main([str(config), "--to-official", "--output", str(tmp_path)]) == 2
    assert "as a .keras model" in capsys.readouterr().err
    # --text-model on a model without text inputs: refused before any loading
    # (here the checkpoint does not even exist).
    for model in ("pretrainer", "backbone"):
        args = [str(tmp_path / "missing"), "--output", out, "--text-model", "12"]
        assert main([*args, "--model", model]) == 2
        err = capsys.readouterr().err
        assert "--text-model wraps a classifier, multiple_choice, span_qa" in err
        assert f"Received: --model {model}" in err and "No checkpoint" not in err


@pytest.fixture(scope="module")
def text_model_file(tmp_path_factory):
    """albert-convert --text-model on a release whose vocabulary is our 8k
    SentencePiece model: (exit status, stderr, .keras path, release folder)."""
    from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    from albert_keras.sample_text import SPM_MODEL_PATH
    from checkpoints_convert import save_official_checkpoint

    root = tmp_path_factory.mktemp("text_model")
    release = root / "release"
    config = AlbertConfig.from_dict({**BASE_CONFIG, "vocab_size": 8000})
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=3)
    save_official_checkpoint(classifier, str(release / "model.ckpt-best"))
    shutil.copy(SPM_MODEL_PATH, release / "30k-clean.model")
    out = str(root / "text.keras")
    args = [str(release), "--model", "classifier", "--output", out]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = main([*args, "--text-model", "12"])
        wrong_model = main([*args, "--model", "backbone", "--text-model", "12"])
    return status, wrong_model, stderr.getvalue(), out, str(release)


def test_text_model_takes_the_release_vocabulary(text_model_file):
    """--text-model wraps the classifier with the release's 30k-clean.model.

    (Serving strings from the SavedModel is AlbertTextModel's own test.)
    """
    status, wrong_model, err, out, release = text_model_file
    assert status == 0
    assert "tokenizer: " + os.path.join(release, "30k-clean.model") in err
    assert os.path.isfile(out)
    assert wrong_model == 2
    assert "--text-model wraps a classifier, multiple_choice, span_qa or" in err


def test_text_model_keras_file_reloads(text_model_file):
    model = keras.saving.load_model(text_model_file[3])
    assert model(tf.constant(["the cat"]))["logits"].shape == (1, 3)


def test_text_model_of_a_chinese_release(tmp_path):
    """A *_zh release ships vocab_chinese.txt: --text-model takes the WordPiece
    tokenizer, and the .keras text model tokenizes Chinese per character."""
    from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    from albert_keras.tokenizers import AlbertWordPieceTokenizer
    from albert_keras.tokenizers.vocabulary import wordpiece_reserved_tokens
    from checkpoints_convert import save_official_checkpoint

    release = tmp_path / "albert_base_zh"
    words = ["三", "国", "演", "义", "天", "下", "大", "势", "，", "。", "the", "##s"]
    vocabulary = wordpiece_reserved_tokens() + words
    config = AlbertConfig.from_dict(
        {**BASE_CONFIG, "vocab_size": len(vocabulary), "hidden_act": "relu"}
    )
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    save_official_checkpoint(classifier, str(release / "model.ckpt-best"))
    (release / "vocab_chinese.txt").write_text("\n".join(vocabulary) + "\n")
    out = str(tmp_path / "zh.keras")
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = main(
            [
                str(release),
                "--model",
                "classifier",
                "--output",
                out,
                "--text-model",
                "16",
            ]
        )
    assert status == 0, stderr.getvalue()
    assert "vocab_chinese.txt" in stderr.getvalue()
    model = keras.saving.load_model(out)
    assert isinstance(model.tokenizer, AlbertWordPieceTokenizer)
    ids = model.tokenizer(tf.constant(["三国演义，天下大势。"]))[0].numpy().tolist()
    assert ids == [vocabulary.index(c) for c in "三国演义，天下大势。"]
    assert model(tf.constant(["三国演义"]))["logits"].shape == (1, 2)


def test_text_model_of_a_squad_v2_model_answers_questions(tmp_path):
    """--text-model on an official run_squad_v2 checkpoint: questions and
    contexts in, the same answers as the model it was written from."""
    from albert_keras import AlbertBackbone, AlbertConfig, AlbertSquadV2
    from albert_keras.models import AlbertSpanTextModel, with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tokenizers import AlbertTokenizer
    from checkpoints_convert import save_official_checkpoint

    release = tmp_path / "squad_v2"
    config = AlbertConfig.from_dict({**BASE_CONFIG, "vocab_size": 8000})
    keras.utils.set_random_seed(5)
    reader = AlbertSquadV2(AlbertBackbone(config), start_n_top=2, end_n_top=2)
    save_official_checkpoint(reader, str(release / "model.ckpt-best"))
    shutil.copy(SPM_MODEL_PATH, release / "30k-clean.model")
    out = str(tmp_path / "qa.keras")
    args = [str(release), "--model", "squad_v2", "--output", out, "--text-model"]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = main([*args, "24", "--null-threshold", "1.5"])
        too_short = main([*args, "4"])
    assert status == 0, stderr.getvalue()
    assert too_short == 2 and "--text-model 4: " in stderr.getvalue()
    model = keras.saving.load_model(out)
    assert isinstance(model, AlbertSpanTextModel) and model.null_threshold == 1.5
    questions = ["Who came home?", "When?"]
    contexts = ["Emma came home with Harriet after the ball. " * 4, "Yesterday."]
    expected = with_tokenizer(
        reader, AlbertTokenizer(SPM_MODEL_PATH), 24, max_query_length=20
    )((questions, contexts))
    got = model((questions, contexts))
    assert any(got["best_span"].numpy())
    assert got["best_span"].numpy().tolist() == expected["best_span"].numpy().tolist()
    assert max_abs_diff(got["null_odds"], expected["null_odds"]) < 1e-5
