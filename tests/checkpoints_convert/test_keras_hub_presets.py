"""keras-hub presets both ways, and `from_preset` on every source kind.

keras-hub is the independent reference: its own `from_preset` reads the
folders `save_to_preset` writes, and folders its own `save_to_preset` writes
load into ours; outputs are compared with max abs diff on tiny configs.
"""

import os
import tarfile
import warnings

import keras
import numpy as np
import pytest
from albert_test_case import max_abs_diff

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras import AlbertPretrainer as Pretrainer
from albert_keras.sample_text import SPM_MODEL_PATH
from checkpoints_convert import ConversionError, save_hf_checkpoint
from checkpoints_convert import save_official_checkpoint as save_official
from checkpoints_convert.cli import main as convert_main
from checkpoints_convert.preset_sources import RELEASE_URL

keras_hub = pytest.importorskip("keras_hub")  # in the test extra

TINY = {
    "vocab_size": 8000,  # the embedded SentencePiece model's, saved beside
    "embedding_size": 16,
    "hidden_size": 32,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 24,
}
# Keras's attention masks with a large negative, the official code with
# -10000: float32 rounding apart, the outputs agree.
TOLERANCE = 1e-5


def _inputs(batch=3, length=12, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, length), "int32")
    mask[1, 8:] = 0
    segments = np.zeros((batch, length), "int32")
    segments[:, 6:] = 1
    ids = rng.integers(5, 100, (batch, length)).astype("int32")
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


def _randomized(model, seed=0):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    return model


def _diff(a, b, x=None):
    x = _inputs() if x is None else x
    got, want = a(x), b(x)
    return max(
        max_abs_diff(got[k], want[k]) for k in ("sequence_output", "pooled_output")
    )


@pytest.mark.parametrize(
    "fields",
    [{}, {"num_hidden_groups": 2, "inner_group_num": 2}, {"embedding_size": 32}],
    ids=["all_shared", "groups_2_inner_2", "no_projection"],
)
def test_ours_to_keras_hub_and_back(fields, tmp_path):
    ours = _randomized(AlbertBackbone(dict(TINY, **fields)))
    folder = ours.save_to_preset(str(tmp_path / "preset"), tokenizer=SPM_MODEL_PATH)
    assert {"config.json", "model.weights.h5", "tokenizer.json"} <= set(
        os.listdir(folder)
    )
    assert os.path.isfile(os.path.join(folder, "assets/tokenizer/vocabulary.spm"))
    theirs = keras_hub.models.AlbertBackbone.from_preset(folder)
    assert _diff(theirs, ours) < TOLERANCE
    back = AlbertBackbone.from_preset(folder)
    assert back.config == ours.config.replace(hidden_dropout_prob=0.0)
    assert _diff(back, ours) == 0


def test_keras_hubs_own_preset_into_ours(tmp_path):
    theirs = keras_hub.models.AlbertBackbone(
        vocabulary_size=100,
        num_layers=4,
        num_heads=4,
        embedding_dim=16,
        hidden_dim=32,
        intermediate_dim=64,
        num_groups=2,
        max_sequence_length=24,
    )
    _randomized(theirs, seed=1)
    theirs.save_to_preset(str(tmp_path))
    ours = AlbertBackbone.from_preset(str(tmp_path))
    assert (ours.config.num_hidden_groups, ours.config.hidden_act) == (2, "gelu")
    assert _diff(ours, theirs) < TOLERANCE
    classifier = AlbertClassifier.from_preset(str(tmp_path), num_classes=3)
    assert classifier.conversion_report.new_heads == ("classifier",)
    assert _diff(classifier.backbone, theirs) < TOLERANCE


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"hidden_act": "relu"}, "hidden_act='relu'"),
        ({"hidden_act": "gelu_exact"}, "hidden_act='gelu_exact'"),
        ({"sharing": "attention"}, "sharing='attention'"),
        ({"num_hidden_layers": 3, "num_hidden_groups": 2}, "num_hidden_layers=3"),
        ({"attention_probs_dropout_prob": 0.2}, "one dropout rate"),
    ],
)
def test_configs_keras_hub_cannot_represent_are_refused(fields, named, tmp_path):
    model = AlbertBackbone(dict(TINY, **fields))
    with pytest.raises(ConversionError, match="cannot represent") as error:
        model.save_to_preset(str(tmp_path / "preset"))
    assert named in str(error.value)
    assert not os.path.exists(tmp_path / "preset")


def _sources(model, root):
    """The model written as every kind `from_preset` reads."""
    official = root / "albert_tiny"
    save_official(model, str(official / "model.ckpt-best"))
    with tarfile.open(root / "albert_tiny.tar.gz", "w:gz") as tar:
        tar.add(official, arcname="albert_tiny")
    hub = root / "tf1_hub"
    (hub / "assets").mkdir(parents=True)
    save_official(
        model,
        str(hub / "variables" / "variables"),
        config_path=str(hub / "assets" / "albert_config.json"),
    )
    save_hf_checkpoint(model, root / "transformers")
    model.save(root / "model.keras")
    model.save_to_preset(str(root / "keras_hub"))
    names = ["albert_tiny", "albert_tiny.tar.gz", "tf1_hub", "transformers"]
    return [str(root / n) for n in [*names, "model.keras", "keras_hub"]]


def test_from_preset_reads_every_kind(tmp_path):
    pretrainer = _randomized(Pretrainer(AlbertBackbone(TINY)))
    x = dict(_inputs(), mask_positions=np.tile(np.arange(4), (3, 1)).astype("int32"))
    for source in _sources(pretrainer, tmp_path):
        backbone = AlbertBackbone.from_preset(source)
        assert type(backbone) is AlbertBackbone
        assert _diff(backbone, pretrainer.backbone) == 0, source
        if "keras_hub" in source:
            continue  # keras-hub presets hold the backbone only
        loaded = Pretrainer.from_preset(source)
        assert max_abs_diff(loaded(x)["mlm_logits"], pretrainer(x)["mlm_logits"]) == 0
    random = AlbertBackbone.from_preset(str(tmp_path / "transformers"), False)
    assert random.config == pretrainer.backbone.config
    assert _diff(random, pretrainer.backbone) > 0.01


def test_unknown_kind_is_refused_naming_what_was_found(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ConversionError, match=r"holding notes\.txt"):
        AlbertBackbone.from_preset(str(tmp_path))
    with pytest.raises(ConversionError, match="nothing"):
        AlbertBackbone.from_preset(str(tmp_path / "missing"))


def test_bare_names_load_cached_weights_or_refuse_with_the_url(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_KERAS_HOME", str(tmp_path))
    for name in ("albert_base_v2", "base"):
        with pytest.raises(FileNotFoundError) as error:
            AlbertBackbone.from_preset(name)
        message = str(error.value)
        assert RELEASE_URL.format(name="albert_base_v2") in message
        assert "albert-convert albert_base_v2.tar.gz --output " in message
        assert str(tmp_path) in message and "load_weights=False" in message
    with pytest.raises(FileNotFoundError, match="albert_tiny has no official release"):
        AlbertBackbone.from_preset("tiny")
    random = AlbertBackbone.from_preset("albert_tiny", load_weights=False)
    assert random.config == AlbertConfig.from_preset("albert_tiny")
    with pytest.raises(TypeError, match="load_weights=False"):
        AlbertBackbone.from_preset("albert_tiny", vocab_size=50)
    random.save(tmp_path / "albert_tiny.keras")
    cached = AlbertBackbone.from_preset("tiny")
    assert _diff(cached, random) == 0


def test_cli_to_keras_hub_and_back(tmp_path):
    model = _randomized(Pretrainer(AlbertBackbone(TINY)))
    save_official(model, str(tmp_path / "release" / "model.ckpt-best"))
    os.link(SPM_MODEL_PATH, tmp_path / "release" / "30k-clean.model")
    with tarfile.open(tmp_path / "release.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "release", arcname="albert_tiny")
    out = tmp_path / "hub"
    argv = [str(tmp_path / "release.tar.gz"), "--to-keras-hub", "--output", str(out)]
    assert convert_main(argv) == 0
    assert os.path.isfile(out / "assets" / "tokenizer" / "vocabulary.spm")
    theirs = keras_hub.models.AlbertBackbone.from_preset(str(out))
    assert _diff(theirs, model.backbone) < TOLERANCE
    back = tmp_path / "back.keras"
    assert convert_main([str(out), "--model", "backbone", "--output", str(back)]) == 0
    assert _diff(keras.saving.load_model(back), model.backbone) == 0
    relu = AlbertBackbone(dict(TINY, hidden_act="relu"))
    relu.save(tmp_path / "relu.keras")
    argv = [str(tmp_path / "relu.keras"), "--to-keras-hub", "--output", str(out)]
    assert convert_main(argv) == 2


def test_keras_hub_tokenizer_ids(tmp_path):
    """Equal ids where the official preprocessing changes nothing; keras-hub
    skips its lowercasing and accent stripping, so other text differs."""
    import unicodedata

    from albert_keras.sample_text import read_paragraphs
    from albert_keras.tokenizers import AlbertTokenizer

    def official(text):  # tokenization.preprocess_text, lower=True
        text = unicodedata.normalize("NFKD", " ".join(text.split()))
        return "".join(c for c in text if not unicodedata.combining(c)).lower()

    folder = str(tmp_path / "preset")
    AlbertBackbone(TINY).save_to_preset(
        folder, tokenizer=AlbertTokenizer(SPM_MODEL_PATH)
    )
    theirs = keras_hub.models.AlbertTokenizer.from_preset(folder)
    ours = AlbertTokenizer(SPM_MODEL_PATH)

    def same(texts):
        return [
            list(a) == [int(i) for i in b]
            for a, b in zip(ours(texts).to_list(), theirs(texts), strict=True)
        ]

    lines = read_paragraphs(limit=200)
    assert all(same([official(t) for t in lines]))
    mixed_case = same(lines)
    assert sum(mixed_case) < len(lines) // 10  # capitals are <unk> for keras-hub
    accented = ["the café was naïve, said émile to zoë.", "déjà vu at the château"]
    assert not any(same(accented))
    assert all(same([official(t) for t in accented]))


def test_classifier_as_keras_hub_text_classifier(tmp_path):
    ours = _randomized(AlbertClassifier(AlbertBackbone(TINY), num_classes=3))
    folder = ours.save_to_preset(str(tmp_path / "ours"), tokenizer=SPM_MODEL_PATH)
    theirs = keras_hub.models.TextClassifier.from_preset(folder)
    assert type(theirs).__name__ == "AlbertTextClassifier"
    x = _inputs()
    assert max_abs_diff(theirs(x), ours(x)["logits"]) < TOLERANCE
    back = AlbertClassifier.from_preset(folder)
    assert back.num_classes == 3
    assert max_abs_diff(back(x)["logits"], ours(x)["logits"]) == 0
    backbone = AlbertBackbone.from_preset(folder)
    assert backbone.conversion_report.skipped_heads == ("output_weights", "output_bias")
    # keras-hub's own task preset, random weights, into ours.
    hub_task = keras_hub.models.AlbertTextClassifier(
        keras_hub.models.AlbertBackbone.from_preset(folder), num_classes=2
    )
    _randomized(hub_task, seed=2)
    hub_task.save_to_preset(str(tmp_path / "theirs"))
    mine = AlbertClassifier.from_preset(str(tmp_path / "theirs"))
    assert max_abs_diff(mine(x)["logits"], hub_task(x)) < TOLERANCE


def test_cli_takes_the_vocabulary_beside_a_keras_file(tmp_path, capsys):
    """A fine-tuning run's folder holds best.keras and its SentencePiece model
    under the model's own name: --to-keras-hub and --to-hf find it there."""
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    AlbertClassifier(AlbertBackbone(TINY), num_classes=2).save(run / "best.keras")
    shutil.copy(SPM_MODEL_PATH, run / "austen-8k.model")
    source = str(run / "best.keras")
    assert (
        convert_main([source, "--to-keras-hub", "--output", str(tmp_path / "h")]) == 0
    )
    assert "vocabulary: " + str(run / "austen-8k.model") in capsys.readouterr().err
    spm = tmp_path / "h" / "assets" / "tokenizer" / "vocabulary.spm"
    assert spm.read_bytes() == (run / "austen-8k.model").read_bytes()
    assert convert_main([source, "--to-hf", "--output", str(tmp_path / "hf")]) == 0
    hf_spm = tmp_path / "hf" / "spiece.model"
    assert hf_spm.read_bytes() == (run / "austen-8k.model").read_bytes()
    missing = str(run / "vocab.model")
    argv = [
        source,
        "--to-keras-hub",
        "--output",
        str(tmp_path / "h2"),
        "--vocab",
        missing,
    ]
    assert convert_main(argv) == 2
    assert f"--vocab {missing!r} does not exist" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "h2")


def test_a_wordpiece_vocabulary_has_no_keras_hub_tokenizer(tmp_path, capsys):
    """keras-hub's AlbertTokenizer is SentencePiece only. Passed with --vocab,
    a vocab.txt was dropped with a log line and the run ended 0 with no
    tokenizer: refused now. Found beside the model, it is still skipped."""
    run = tmp_path / "run"
    run.mkdir()
    AlbertBackbone(TINY).save(run / "best.keras")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "emma", "wrote"]
    (run / "best.vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    source, vocab = str(run / "best.keras"), str(run / "best.vocab.txt")
    argv = [source, "--to-keras-hub", "--output", str(tmp_path / "h"), "--vocab"]
    assert convert_main([*argv, vocab]) == 2
    err = capsys.readouterr().err
    assert "keras-hub's AlbertTokenizer reads SentencePiece models only" in err
    assert "leave the vocabulary out" in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "h")
    assert convert_main(argv[:-1]) == 0  # the vocabulary beside it: skipped
    assert f"{vocab} is not a SentencePiece model: no keras-hub tokenizer" in (
        capsys.readouterr().err
    )
    assert not os.path.exists(tmp_path / "h" / "assets" / "tokenizer")


def test_a_vocabulary_larger_than_the_embeddings_is_refused(tmp_path):
    """The 8,000-piece model beside a 100-token backbone was written: keras-hub
    then looked ids up past the embedding table (an error on CPU, zeros on
    GPU). `with_tokenizer` refuses the same pairing."""
    folder = tmp_path / "preset"
    small = AlbertBackbone(dict(TINY, vocab_size=100))
    with pytest.raises(ConversionError, match="has 8000 tokens but the model embeds"):
        small.save_to_preset(folder, tokenizer=SPM_MODEL_PATH)
    assert not os.path.exists(folder)
    fits = AlbertBackbone(TINY)
    with pytest.warns(UserWarning, match="does not lowercase"):
        fits.save_to_preset(folder, tokenizer=SPM_MODEL_PATH)
    tokenizer = keras_hub.models.AlbertTokenizer.from_preset(str(folder))
    assert tokenizer.vocabulary_size() == 8000


def test_a_missing_tokenizer_file_is_named_as_missing(tmp_path):
    with pytest.raises(ConversionError, match="'missing.model' does not exist"):
        AlbertBackbone(TINY).save_to_preset(
            str(tmp_path / "p"), tokenizer="missing.model"
        )
    assert not os.path.exists(tmp_path / "p")


def test_another_num_classes_gives_a_new_head_from_every_source(tmp_path):
    """A keras-hub classifier preset (or an official run_classifier
    checkpoint) with num_classes=5 over a 3-class head was a shape-mismatch
    error, where a .keras file and keras-hub's own from_preset give a new
    head."""
    ours = _randomized(AlbertClassifier(AlbertBackbone(TINY), num_classes=3))
    hub = ours.save_to_preset(str(tmp_path / "hub"), tokenizer=SPM_MODEL_PATH)
    save_official(ours, str(tmp_path / "official" / "model.ckpt-best"))
    x = _inputs()
    for source in (hub, str(tmp_path / "official")):
        five = AlbertClassifier.from_preset(source, num_classes=5)
        assert five.num_classes == 5
        report = five.conversion_report
        assert report.new_heads == ("classifier",)
        assert set(report.skipped_heads) >= {"output_weights", "output_bias"}
        assert _diff(five.backbone, ours.backbone, x) == 0  # the backbone is loaded
        same = AlbertClassifier.from_preset(source, num_classes=3)
        assert max_abs_diff(same(x)["logits"], ours(x)["logits"]) < TOLERANCE


def test_cli_to_keras_hub_says_which_heads_it_leaves_out(tmp_path, capsys):
    # A pretrainer went out as a backbone-only preset, its MLM and SOP heads
    # dropped without a word (converting back gave new random heads).
    model = Pretrainer(AlbertBackbone(TINY))
    model.save(tmp_path / "pretrainer.keras")
    argv = [str(tmp_path / "pretrainer.keras"), "--to-keras-hub"]
    assert convert_main([*argv, "--output", str(tmp_path / "hub")]) == 0
    assert "not in the keras-hub preset (a backbone): the mlm, sop head(s)" in (
        capsys.readouterr().err
    )


def test_save_to_preset_warns_of_the_heads_it_leaves_out(tmp_path):
    from albert_keras import AlbertTokenClassifier

    model = AlbertTokenClassifier(AlbertBackbone(TINY), num_classes=3)
    with pytest.warns(UserWarning, match="the token_classifier head"):
        model.save_to_preset(str(tmp_path / "tagger"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # a backbone keeps everything: no word
        AlbertBackbone(TINY).save_to_preset(str(tmp_path / "backbone"))
    assert not [w for w in caught if "keras-hub preset" in str(w.message)]


def test_a_multi_label_classifier_is_keras_hubs_sigmoid_classifier(tmp_path):
    backbone = AlbertBackbone(TINY)
    ours = _randomized(AlbertClassifier(backbone, num_classes=3, multi_label=True))
    folder = ours.save_to_preset(str(tmp_path / "ours"))
    theirs = keras_hub.models.TextClassifier.from_preset(folder)
    x = _inputs()
    logits = np.asarray(ours(x)["logits"], "float64")
    assert max_abs_diff(theirs(x), 1 / (1 + np.exp(-logits))) < TOLERANCE
    back = AlbertClassifier.from_preset(folder)
    assert back.multi_label
    assert max_abs_diff(back(x)["logits"], logits) == 0
