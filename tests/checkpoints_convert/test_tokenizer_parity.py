"""The tokenizers of written transformers and keras-hub folders give our ids:
SentencePiece models made lowercased and cased, WordPiece vocabularies."""

import json

import pytest

from albert_keras import AlbertBackbone, AlbertConfig
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs
from albert_keras.tokenizers import load_tokenizer, train_sentencepiece
from albert_keras.tokenizers.sentencepiece_text import preprocess_text
from albert_keras.tokenizers.vocabulary import build_wordpiece_vocabulary
from checkpoints_convert.hf_sentencepiece_files import vocabulary_lowercase
from checkpoints_convert.hf_writer import write_hf_vocabulary

# Capitals, accents, `` and '' (kept by the official preprocessing, rewritten
# by transformers' AlbertTokenizer), whitespace runs, CJK, digits, and
# ALBERT's user-defined pieces "(", ".", "-" after a space.
LINES = [
    "Emma Woodhouse, HANDSOME and Clever.",
    "naïve Café, ZÜRICH résumé; señor Ångström",
    "``Quoted,'' she said. ``Yes.''",
    "many    spaces\t\tand\n newlines   here",
    "天下大势，分久必合。三国 text",
    "In 1815, $40,000,000 (3.5%) -- 12:30pm!",
]


@pytest.fixture(scope="module")
def vocabularies(tmp_path_factory):
    """{name: (vocabulary, lowercase)}: the embedded lowercased model, a cased
    one trained as `albert-keras vocab --no-lowercase` does, WordPiece both ways."""
    folder = tmp_path_factory.mktemp("vocabularies")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(read_paragraphs(1500) + LINES * 3), encoding="utf-8")
    cased = train_sentencepiece(corpus, str(folder / "cased"), 1000, False, 1)
    return {
        "spm_lowercased": (SPM_MODEL_PATH, True),
        "spm_cased": (cased, False),
        "wordpiece_lowercased": (
            build_wordpiece_vocabulary(corpus, str(folder / "lower.txt"), 400),
            True,
        ),
        "wordpiece_cased": (
            build_wordpiece_vocabulary(corpus, str(folder / "cased.txt"), 400, False),
            False,
        ),
    }


@pytest.mark.parametrize(
    "name", ["spm_lowercased", "spm_cased", "wordpiece_lowercased", "wordpiece_cased"]
)
def test_transformers_auto_tokenizer_gives_our_ids(name, vocabularies, tmp_path):
    transformers = pytest.importorskip("transformers")
    vocab, lowercase = vocabularies[name]
    written = write_hf_vocabulary(tmp_path, vocab)  # lowercasing as it was made
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    ours = load_tokenizer(vocab, lowercase=lowercase)
    expected = [list(ids) for ids in ours(LINES).to_list()]
    got = [theirs(line, add_special_tokens=False)["input_ids"] for line in LINES]
    assert got == expected
    cls, sep = ours.token_to_id("[CLS]"), ours.token_to_id("[SEP]")
    assert theirs(LINES[0])["input_ids"] == [cls, *expected[0], sep]
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["do_lower_case"] is lowercase
    # Read back (`albert-convert --text-model`), the folder says how to lowercase.
    assert vocabulary_lowercase(written) is lowercase


@pytest.mark.parametrize("name", ["spm_lowercased", "spm_cased"])
def test_keras_hub_tokenizer_needs_the_official_preprocessing(
    name, vocabularies, tmp_path
):
    """keras-hub cannot lowercase or drop accents: the writer warns, and
    text preprocessed as the warning says gets our ids."""
    keras_hub = pytest.importorskip("keras_hub")
    from checkpoints_convert.keras_hub_writer import save_keras_hub_preset

    vocab, lowercase = vocabularies[name]
    ours = load_tokenizer(vocab, lowercase=lowercase)
    config = AlbertConfig.from_preset(
        "albert_tiny", vocab_size=ours.vocabulary_size(), num_hidden_layers=1
    )
    with pytest.warns(
        UserWarning,
        match="does not lowercase" if lowercase else "does not drop accents",
    ):
        save_keras_hub_preset(AlbertBackbone(config), tmp_path / "preset", vocab=vocab)
    theirs = keras_hub.models.AlbertTokenizer.from_preset(str(tmp_path / "preset"))
    expected = [list(ids) for ids in ours(LINES).to_list()]
    raw = [[int(i) for i in theirs(line)] for line in LINES]
    assert raw[1] != expected[1]  # accents
    prepared = [preprocess_text(line, lowercase) for line in LINES]
    assert [[int(i) for i in theirs(line)] for line in prepared] == expected
