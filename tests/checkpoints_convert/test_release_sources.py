"""A release reaches fine-tuning however it is given: by name from the cache,
as its `.tar.gz`, or as a release written by `--to-official`; its vocabulary
always goes along."""

import os
import shutil
import tarfile

import keras
import numpy as np
import pytest
from albert_test_case import TINY_FINETUNING, task_file

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import ClassificationTask
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer
from checkpoints_convert import save_official_checkpoint
from checkpoints_convert.backbone_loader import (
    find_vocabulary,
    load_backbone,
    resolve_init,
)
from checkpoints_convert.cli import main as convert
from checkpoints_convert.conversion_error import ConversionError


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """An official-format release of a tiny classifier (8k vocabulary):
    (folder, its .tar.gz, the backbone's weights)."""
    root = tmp_path_factory.mktemp("release")
    folder = root / "albert_base_v2"
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    save_official_checkpoint(model, str(folder / "model.ckpt-best"))
    shutil.copy(SPM_MODEL_PATH, folder / "30k-clean.model")
    packed = root / "albert_base_v2.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(folder, arcname="albert_base_v2")
    return str(folder), str(packed), model.backbone.get_weights()


def _same(weights, expected):
    return max(
        float(np.max(np.abs(a - b))) for a, b in zip(weights, expected, strict=True)
    )


def test_a_released_name_is_its_cached_weights_and_vocabulary(
    release, tmp_path, monkeypatch, capsys
):
    folder, _, weights = release
    monkeypatch.setenv("ALBERT_KERAS_HOME", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="No local weights for preset"):
        resolve_init("albert_base_v2")
    with pytest.raises(FileNotFoundError, match="No local weights for preset"):
        load_backbone("base", 8000)
    # The command the refusal prints fills the cache; the vocabulary goes
    # beside the .keras file under its name.
    cached = tmp_path / "cache" / "albert_base_v2.keras"
    assert convert([folder, "--output", str(cached)]) == 0
    assert f"wrote {tmp_path / 'cache' / 'albert_base_v2.model'}" in (
        capsys.readouterr().err
    )
    with open(SPM_MODEL_PATH, "rb") as f, open(str(cached)[:-6] + ".model", "rb") as g:
        assert f.read() == g.read()
    for name in ("albert_base_v2", "base"):
        assert resolve_init(name) == str(cached)
        assert find_vocabulary(name) == str(cached)[:-6] + ".model"
        assert _same(load_backbone(name, 8000).get_weights(), weights) == 0.0
    # Sizes without a release stay random, with the embedded vocabulary.
    assert resolve_init("albert_tiny") == "albert_tiny"
    assert find_vocabulary("albert_tiny") == SPM_MODEL_PATH
    # The tokenizer of the name, as keras-hub's Tokenizer.from_preset.
    text = ["Emma Woodhouse, handsome, clever, and rich."]
    expected = AlbertTokenizer(SPM_MODEL_PATH)(text).to_list()
    for name in ("albert_base_v2", "albert_tiny", folder):
        assert AlbertTokenizer.from_preset(name)(text).to_list() == expected
    wordpiece = tmp_path / "zh"
    wordpiece.mkdir()
    (wordpiece / "vocab_chinese.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]) + "\n"
    )
    assert type(AlbertWordPieceTokenizer.from_preset(str(wordpiece))).__name__ == (
        "AlbertWordPieceTokenizer"
    )
    with pytest.raises(ValueError, match="use AlbertWordPieceTokenizer.from_preset"):
        AlbertTokenizer.from_preset(str(wordpiece))
    # Nothing there: the fix a Python caller can use, not `--vocab` nor a
    # `load_weights=False` that tokenizers do not take.
    with pytest.raises(FileNotFoundError) as error:
        AlbertTokenizer.from_preset("albert_large_v2")
    assert "A tokenizer needs the release's vocabulary" in str(error.value)
    assert "load_weights" not in str(error.value)
    (wordpiece / "vocab_chinese.txt").unlink()
    (wordpiece / "model.keras").write_bytes(b"")
    with pytest.raises(FileNotFoundError) as error:
        AlbertWordPieceTokenizer.from_preset(str(wordpiece / "model.keras"))
    assert "build the tokenizer from a vocabulary file" in str(error.value)
    assert "--vocab" not in str(error.value)
    # A path that does not exist is not "no vocabulary beside" it; a near
    # miss of a preset name is named (the tokenizer's and the model's).
    with pytest.raises(
        ConversionError, match="Cannot tell what 'no_such' is: found nothing"
    ):
        AlbertTokenizer.from_preset("no_such")
    for load in (AlbertTokenizer.from_preset, AlbertBackbone.from_preset):
        with pytest.raises(ConversionError, match="did you mean 'albert_base_v2'"):
            load("albert_bse_v2")


def test_fine_tuning_starts_from_a_release_tar(release, tmp_path):
    _, packed, weights = release
    out = tmp_path / "run"
    options = dict(TINY_FINETUNING, init=packed, learning_rate=0.0, epochs=1)
    options.update(max_train_examples=16, max_dev_examples=16)
    task = ClassificationTask(sequence_length=16)
    dev = task_file("rt_sentiment", "dev.jsonl")
    result = run_finetuning(task, dev, dev, output_dir=str(out), **options)
    assert result["init"] == packed  # recorded by its name, not the unpacked copy
    # At rate 0 the fine-tuned backbone is the release's.
    model = keras.saving.load_model(out / "best.keras")
    assert _same(model.backbone.get_weights(), weights) == 0.0
    with open(SPM_MODEL_PATH, "rb") as f, open(out / "30k-clean.model", "rb") as g:
        assert f.read() == g.read()
    # Outside fine-tuning a packed release is named as such.
    with pytest.raises(FileNotFoundError, match="is a packed release: unpack it"):
        find_vocabulary(packed)


def test_text_model_of_a_release_written_here(release, tmp_path, capsys):
    """`--to-official` keeps the model's vocabulary under its own name; the
    release it writes converts back with `--text-model`, and `--vocab` gives
    one where the release has none."""
    folder, _, _ = release
    run = tmp_path / "run"
    run.mkdir()
    converted = run / "best.keras"
    assert convert([folder, "--model", "classifier", "--output", str(converted)]) == 0
    os.remove(run / "best.model")  # a run folder keeps it under its own name
    shutil.copy(SPM_MODEL_PATH, run / "austen-8k.model")
    mine = tmp_path / "mine"
    assert convert([str(converted), "--to-official", "--output", str(mine)]) == 0
    assert os.path.isfile(mine / "austen-8k.model")
    args = [str(mine), "--model", "classifier", "--text-model", "16"]
    assert convert([*args, "--output", str(tmp_path / "text.keras")]) == 0
    err = capsys.readouterr().err
    assert f"tokenizer: {mine / 'austen-8k.model'}" in err
    os.remove(mine / "austen-8k.model")
    assert convert([*args, "--output", str(tmp_path / "refused.keras")]) == 2
    assert "Pass it with --vocab" in capsys.readouterr().err
    given = [*args, "--vocab", SPM_MODEL_PATH, "--output", str(tmp_path / "v.keras")]
    assert convert(given) == 0
    assert f"tokenizer: {SPM_MODEL_PATH}" in capsys.readouterr().err


def test_load_official_checkpoint_takes_a_release_tar_and_a_keras_file(
    release, tmp_path
):
    """As `from_preset` does: a `.tar.gz` is unpacked for the load, a `.keras`
    file gives its model (or its backbone under another head), with a report."""
    from checkpoints_convert import ConversionError, load_official_checkpoint

    _, packed, weights = release
    classifier = load_official_checkpoint(packed, model="classifier")
    assert _same(classifier.backbone.get_weights(), weights) == 0.0
    report = classifier.conversion_report
    assert report.checkpoint == f"model.ckpt-best in {packed}"
    assert report.config_source == f"albert_config.json in {packed}"
    assert report.vocab_path is None  # the unpacked copy is gone
    saved = tmp_path / "classifier.keras"
    classifier.save(saved)
    shutil.copy(SPM_MODEL_PATH, tmp_path / "classifier.model")
    same = load_official_checkpoint(str(saved), model="classifier")
    assert _same(same.get_weights(), classifier.get_weights()) == 0.0
    assert same.conversion_report.vocab_path == str(tmp_path / "classifier.model")
    assert same.conversion_report.new_heads == ()
    backbone = load_official_checkpoint(saved)
    assert _same(backbone.get_weights(), weights) == 0.0
    summary = backbone.conversion_report.summary()
    assert "AlbertBackbone: loaded" in summary and "no head for: classifier" in summary
    pretrainer = load_official_checkpoint(str(saved), model="pretrainer")
    assert pretrainer.conversion_report.new_heads == ("mlm", "sop")
    with pytest.raises(ConversionError, match="keeps the config it was saved with"):
        load_official_checkpoint(str(saved), config={"vocab_size": 8000})
    # And albert-convert, which reads with it: a .keras file to a backbone.
    out = tmp_path / "backbone.keras"
    assert convert([str(saved), "--model", "backbone", "--output", str(out)]) == 0
    assert _same(keras.saving.load_model(out).get_weights(), weights) == 0.0
    assert os.path.isfile(tmp_path / "backbone.model")


def test_from_preset_of_a_keras_file_keeps_the_head_its_arguments_match(tmp_path):
    """`num_classes` as saved used to build a new, random head in its place;
    `from_preset` had no `conversion_report` for a `.keras` file."""
    keras.utils.set_random_seed(3)
    classifier = AlbertClassifier(AlbertBackbone("albert_tiny"), num_classes=3)
    saved = tmp_path / "classifier.keras"
    classifier.save(saved)
    ids = np.arange(2, 18, dtype="int32").reshape(2, 8)
    x = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": 1 + 0 * ids}
    want = keras.ops.convert_to_numpy(classifier(x)["logits"])
    for kwargs in ({}, {"num_classes": 3}, {"num_classes": 3, "dropout": 0.1}):
        same = AlbertClassifier.from_preset(str(saved), **kwargs)
        got = keras.ops.convert_to_numpy(same(x)["logits"])
        assert _same([got], [want]) == 0.0, kwargs
        assert same.conversion_report.new_heads == (), kwargs
    other = AlbertClassifier.from_preset(str(saved), num_classes=5)
    assert other.num_classes == 5
    assert other.conversion_report.new_heads == ("classifier",)
    assert "classifier/kernel" in other.conversion_report.skipped_heads
    backbone = AlbertBackbone.from_preset(str(saved))
    assert _same(backbone.get_weights(), classifier.backbone.get_weights()) == 0.0
    # Random weights keep the saved head's arguments too (it gave 2 classes).
    fresh = AlbertClassifier.from_preset(str(saved), load_weights=False)
    assert (fresh.num_classes, fresh(x)["logits"].shape) == (3, (2, 3))
    assert (
        AlbertClassifier.from_preset(
            saved, load_weights=False, num_classes=4
        ).num_classes
        == 4
    )


def test_albert_convert_says_how_to_get_a_release_by_name(
    tmp_path, monkeypatch, capsys
):
    """A bare release name not in the cache: the URL and the command that
    fills the cache, as `from_preset` says it."""
    from checkpoints_convert.preset_sources import resolve_preset

    monkeypatch.setenv("ALBERT_KERAS_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no folder of that name here
    assert convert(["albert_base_v2", "--output", str(tmp_path / "x.keras")]) == 2
    err = capsys.readouterr().err
    with pytest.raises(FileNotFoundError) as refusal:
        resolve_preset("albert_base_v2")
    for line in str(refusal.value).splitlines()[:-1]:  # all but the random hint
        assert line in err
    assert "https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz" in err
    cached = tmp_path / "cache" / "albert_base_v2.keras"
    assert f"albert-convert albert_base_v2.tar.gz --output {cached}" in err
    assert "No checkpoint at" not in err
