"""`albert-keras pretrain` end to end on the embedded corpus, and resume."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras import (
    AlbertConfig,
    AlbertPretrainer,  # noqa: F401 (registers the class)
)
from albert_keras.cli import main
from albert_keras.pretraining import pretrain_outputs
from albert_keras.tokenizers import (
    AlbertPacker,
    AlbertTokenizer,
    build_wordpiece_vocabulary,
)
from albert_keras.training import LossCurvePlot


def _skip_text_export(monkeypatch):
    """No savedmodel/ for a run whose savedmodel/ nobody loads: the export is
    the slowest of a tiny run's outputs. The first run of
    test_default_job_runs_reports_and_resumes exports and checks one."""
    monkeypatch.setattr(pretrain_outputs, "export_text_model", lambda *a: None)


@pytest.fixture
def no_export_or_curves(monkeypatch):
    """No savedmodel/ and no curves.png (about a second a drawing): the
    default job checks both."""
    _skip_text_export(monkeypatch)
    monkeypatch.setattr(LossCurvePlot, "draw", lambda self: None)


@pytest.mark.slow
def test_default_job_runs_reports_and_resumes(tmp_path, capsys):
    out = str(tmp_path / "run")
    args = [
        "pretrain",
        "--output-dir",
        out,
        "--steps-per-epoch",
        "3",
        "--save-every",
        "3",
        # The defaults but the model's size, which nothing here checks: the
        # held-out chapters are scored after each epoch and at the end.
        "--preset",
        "albert_tiny",
    ]
    import warnings

    # Without XLA, to save the compilation: XLA is no training setting, and
    # the runs below with it (the default) are the same run.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(args + ["--steps", "6", "--no-jit"]) == 0
    # No Keras noise about the data: the held-out set's batches are counted
    # (TFRecords have no known length) and the pipeline does the shuffling.
    noise = [str(w.message) for w in caught if "ran out of data" in str(w.message)]
    noise += [
        str(w.message) for w in caught if "`shuffle=True` was passed" in str(w.message)
    ]
    assert not noise, noise
    printed = capsys.readouterr().out
    assert "Held-out chapters: MLM accuracy" in printed
    # Output that is not a terminal gets plain lines, not Keras' redrawn bar.
    assert "epoch 2/2 done in" in printed and "val_mlm_accuracy" in printed
    assert "\b" not in printed and "\x1b" not in printed
    for name in ("pretrainer.keras", "curves.png", "history.csv", "metrics.json"):
        assert os.path.exists(os.path.join(out, name)), name
    assert os.path.isdir(os.path.join(out, "logs"))
    # The exported backbone takes raw text and gives what the backbone gives
    # on the official packing of that text.
    served = tf.saved_model.load(os.path.join(out, "savedmodel"))
    texts = ["Emma Woodhouse, handsome, clever, and rich.", ""]
    pooled = served.serve(tf.constant(texts))["pooled_output"].numpy()
    model = keras.saving.load_model(os.path.join(out, "pretrainer.keras"))
    tokenizer = AlbertTokenizer(os.path.join(out, "vocab.model"))
    packed = AlbertPacker.for_tokenizer(tokenizer, 64)(tokenizer(tf.constant(texts)))
    expected = model.backbone(packed)["pooled_output"]
    assert np.max(np.abs(pooled - np.asarray(expected))) < 1e-5
    metrics = json.load(open(os.path.join(out, "metrics.json")))
    assert metrics["global_step"] == 6
    assert 0.0 <= metrics["eval_sop_accuracy"] <= 1.0
    assert metrics["eval_mlm_unigram_baseline"] > 0
    # More steps is another training: refused, naming the change, unless
    # --force-resume; then it continues from the last checkpoint (XLA is
    # no training setting: off, to save the compilation).
    assert main(args + ["--steps", "9"]) == 2
    assert "steps: 6 then, 9 now" in capsys.readouterr().err
    # Its savedmodel/ is not loaded: the one of step 6 stays, and the run
    # started again below must leave it untouched all the same. Nor is its
    # curves.png (checked above): no drawing, about a second each.
    with pytest.MonkeyPatch.context() as patch:
        _skip_text_export(patch)
        patch.setattr(LossCurvePlot, "draw", lambda self: None)
        assert main(args + ["--steps", "9", "--force-resume", "--no-jit"]) == 0
    assert "Resuming from step 6" in capsys.readouterr().out
    assert json.load(open(os.path.join(out, "metrics.json")))["global_step"] == 9
    # Started again, the finished run changes nothing (its training time kept).
    files = ("metrics.json", "pretrainer.keras", "vocab.model", "savedmodel")
    before = {name: os.stat(os.path.join(out, name)).st_mtime_ns for name in files}
    assert main(args + ["--steps", "9"]) == 0
    assert "holds this run, finished (9 steps" in capsys.readouterr().out
    after = {name: os.stat(os.path.join(out, name)).st_mtime_ns for name in files}
    assert after == before


def test_bad_arguments_are_clear(tmp_path, capsys):
    assert (
        main(
            [
                "pretrain",
                "--input",
                str(tmp_path / "none*.txt"),
                "--output-dir",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert "No input file matches" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--vocab", "v.model", "--vocab-size", "500"], "not both"),
        (["--records", "r/*.tfrecord", "--vocab-size", "500"], "already tokenized"),
        (["--records", "r/*.tfrecord", "--held-out-every", "5"], "--eval-records"),
        (["--held-out-every", "300"], "leaves no held-out document"),
        (["--init-checkpoint", "no.keras"], "'no.keras' does not exist"),
        (["--init-checkpoint", "no/model.ckpt"], "'no/model.ckpt' does not exist"),
    ],
)
def test_bad_vocabulary_and_held_out_flags_are_clear(tmp_path, capsys, extra, message):
    args = ["pretrain", "--output-dir", str(tmp_path / "run"), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_packed_release_is_refused_before_any_data_is_made(tmp_path, capsys):
    packed = tmp_path / "albert_base_v2.tar.gz"
    packed.write_bytes(b"")
    args = ["pretrain", "--output-dir", str(tmp_path / "run")]
    assert main([*args, "--init-checkpoint", str(packed)]) == 2
    assert "is a packed release: unpack it (tar xzf" in capsys.readouterr().err
    assert not (tmp_path / "run" / "data").exists()


@pytest.mark.parametrize("files", [[], ["notes.txt"]])
def test_a_folder_without_a_checkpoint_is_refused_in_pretrain_terms(
    tmp_path, capsys, files
):
    folder = tmp_path / "empty"
    folder.mkdir()
    for name in files:
        (folder / name).write_text("x")
    args = ["pretrain", "--output-dir", str(tmp_path / "run")]
    assert main([*args, "--init-checkpoint", str(folder)]) == 2
    error = capsys.readouterr().err
    assert "is a folder without a checkpoint: found " in error
    assert (", ".join(files) or "no files") in error
    assert "preset name" not in error  # pretrain takes no preset names here
    assert not (tmp_path / "run" / "data").exists()


def _brown_documents(count, paragraphs):
    """The first documents of tests/data's Brown slice (48 of 10 paragraphs)."""
    from albert_test_case import corpus_path

    from albert_keras.pretraining.text_documents import read_documents

    documents = read_documents(corpus_path("en_brown.txt"))
    assert len(documents) >= count
    return [doc[:paragraphs] for doc in documents[:count]]


def test_own_corpus_with_a_trained_vocabulary_and_held_out_documents(
    tmp_path, capsys, no_export_or_curves
):
    """`--input` English text with `--vocab-size` and `--held-out-every`: the
    vocabulary is learned from the training documents only, the held-out
    documents are scored, and a resumed run keeps the vocabulary."""
    import sentencepiece as spm

    from albert_keras.tokenizers.vocabulary import train_sentencepiece

    documents = _brown_documents(12, 10)
    corpus = tmp_path / "brown.txt"
    corpus.write_text(
        "\n\n".join("\n".join(doc) for doc in documents) + "\n", encoding="utf-8"
    )
    out = str(tmp_path / "run")
    args = ["pretrain", "--input", str(corpus), "--output-dir", out]
    args += ["--vocab-size", "400", "--held-out-every", "4", "--preset", "albert_tiny"]
    args += ["--max-seq-length", "32", "--max-predictions-per-seq", "4"]
    args += ["--batch-size", "4", "--steps-per-epoch", "2", "--save-every", "2"]
    args += ["--no-jit"]
    assert main(args + ["--steps", "2"]) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "--warmup-steps 100 is more than --steps 2: the whole run" in captured.err
    assert "Held out 3 of 12 documents (every 4th)" in printed
    assert "Held-out documents: MLM accuracy" in printed
    metrics = json.load(open(os.path.join(out, "metrics.json")))
    assert 0.0 <= metrics["eval_sop_accuracy"] <= 1.0

    # The same pieces as a vocabulary trained on documents 0-2, 4-6, 8-10.
    train_text = tmp_path / "expected_train.txt"
    kept = [doc for i, doc in enumerate(documents) if i % 4 != 3]
    train_text.write_text(
        "\n\n".join("\n".join(doc) for doc in kept) + "\n", encoding="utf-8"
    )
    expected = spm.SentencePieceProcessor(
        model_file=train_sentencepiece(str(train_text), str(tmp_path / "ref"), 400)
    )
    vocab_path = os.path.join(out, "vocab.model")
    written = spm.SentencePieceProcessor(model_file=vocab_path)

    def pieces(processor):
        return {processor.id_to_piece(i) for i in range(processor.get_piece_size())}

    assert pieces(written) == pieces(expected)
    model = keras.saving.load_model(os.path.join(out, "pretrainer.keras"))
    assert model.backbone.config.vocab_size == 400

    # Resuming keeps the vocabulary the records were made with. Another
    # --lr-schedule is another training: refused, then --force-resume goes on
    # with it, and the saved pretrainer holds that schedule.
    trained_at = os.path.getmtime(os.path.join(out, "data", "vocab.model"))
    cosine = ["--steps", "4", "--lr-schedule", "cosine"]
    assert main(args + cosine) == 2
    assert "lr_schedule: the default then, 'cosine' now" in capsys.readouterr().err
    assert main(args + cosine + ["--force-resume"]) == 0
    assert "Resuming from step 2" in capsys.readouterr().out
    resumed = keras.saving.load_model(os.path.join(out, "pretrainer.keras"))
    schedule = resumed.optimizer.get_config()["learning_rate"]
    assert schedule["class_name"] == "WarmupCosineDecay", schedule
    assert os.path.getmtime(os.path.join(out, "data", "vocab.model")) == trained_at
    assert pieces(spm.SentencePieceProcessor(model_file=vocab_path)) == pieces(expected)
    # The data is made once: other data flags or other text are refused, even
    # with --force-resume (the run would go on with its old data).
    for change, named in (
        (["--dupe-factor", "3"], "dupe_factor: 2 then, 3 now"),
        (["--held-out-every", "3"], "held_out_every: 4 then, 3 now"),
        (["--vocab-size", "300"], "vocab_size: 400 then, 300 now"),
    ):
        assert main(args + ["--steps", "4", "--force-resume"] + change) == 2
        assert named in capsys.readouterr().err
    corpus.write_text(corpus.read_text(encoding="utf-8") + "\nMore.\n", "utf-8")
    assert main(args + ["--steps", "4"]) == 2
    error = capsys.readouterr().err
    assert "input_sha256: other contents (SHA-256 " in error
    assert "--init-checkpoint" in error

    # Continued (e.g. task-adaptive) pretraining on other text from that
    # pretrainer.keras: its vocabulary is found beside it, and with a zero
    # learning rate the saved model is the one it started from.
    other = tmp_path / "other.txt"
    other.write_text(
        "\n\n".join("\n".join(doc) for doc in _brown_documents(16, 8)[12:]) + "\n",
        encoding="utf-8",
    )
    init = os.path.join(out, "pretrainer.keras")
    more = ["pretrain", "--input", str(other), "--init-checkpoint", init]
    more += ["--max-seq-length", "32", "--max-predictions-per-seq", "4"]
    more += ["--batch-size", "4", "--steps-per-epoch", "1", "--steps", "1"]
    more += ["--learning-rate", "0", "--no-jit"]
    assert main(more + ["--output-dir", str(tmp_path / "more")]) == 0
    printed = capsys.readouterr().out
    assert f"Pretraining the config of {init}: H=" in printed and "V=400" in printed
    continued = keras.saving.load_model(str(tmp_path / "more" / "pretrainer.keras"))
    started = keras.saving.load_model(init)
    assert len(continued.weights) == len(started.weights)
    for a, b in zip(continued.weights, started.weights, strict=True):
        assert a.path == b.path
        assert np.array_equal(np.asarray(a), np.asarray(b)), a.path
    # A .keras without the pretraining heads is refused, naming the fix.
    from albert_keras import AlbertClassifier

    classifier = str(tmp_path / "classifier.keras")
    AlbertClassifier(started.backbone, num_classes=2).save(classifier)
    refused = more[:4] + [classifier] + more[5:]
    assert main(refused + ["--output-dir", str(tmp_path / "c")]) == 2
    error = capsys.readouterr().err
    assert "AlbertClassifier, not an AlbertPretrainer" in error
    assert "pretrainer.keras" in error


def test_a_config_of_another_vocabulary_size_is_refused(tmp_path, capsys):
    config = tmp_path / "albert_config.json"
    AlbertConfig.from_preset("albert_tiny", vocab_size=30000).to_json_file(str(config))
    args = ["pretrain", "--config", str(config), "--output-dir", str(tmp_path / "r")]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert "vocab_size=30000" in error and "8000 tokens" in error


def test_a_preset_takes_the_size_of_a_wordpiece_vocabulary(
    tmp_path, no_export_or_curves
):
    """Chinese text with a WordPiece vocab.txt: the model gets its size, so the
    pretrainer.keras fine-tunes with the vocab.txt written beside it."""
    from albert_test_case import corpus_path

    with open(corpus_path("zh_sanguo.txt"), encoding="utf-8") as f:
        text = f.read()  # eight chapters
    corpus = tmp_path / "zh.txt"
    corpus.write_text(text, encoding="utf-8")
    vocab = build_wordpiece_vocabulary([str(corpus)], str(tmp_path / "zh_vocab.txt"))
    size = len(open(vocab, encoding="utf-8").read().splitlines())
    out = str(tmp_path / "run")
    args = ["pretrain", "--input", str(corpus), "--vocab", vocab, "--output-dir", out]
    args += ["--preset", "albert_tiny", "--steps", "2", "--max-seq-length", "32"]
    args += ["--no-jit"]  # the vocabulary is what matters here, not XLA
    assert main(args + ["--max-predictions-per-seq", "4", "--batch-size", "4"]) == 0
    model = keras.saving.load_model(os.path.join(out, "pretrainer.keras"))
    assert model.backbone.config.vocab_size == size < 30000
    assert os.path.isfile(os.path.join(out, "vocab.txt"))
