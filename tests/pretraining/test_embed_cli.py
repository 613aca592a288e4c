"""`albert-keras embed`: run folders in, vectors out, bad requests refused."""

import json
import shutil

import numpy as np
import pytest
from albert_test_case import max_abs_diff
from write_faults import check_each_write_can_fail

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.cli import main
from albert_keras.models import with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """What `albert-keras finetune` leaves: best.keras (a classifier) and
    vocab.model."""
    folder = tmp_path_factory.mktemp("run")
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    model = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    rng = np.random.default_rng(1)
    for w in model.weights:
        w.assign(rng.normal(0, 0.1, w.shape).astype("float32"))
    model.save(folder / "best.keras")
    shutil.copy(SPM_MODEL_PATH, folder / "vocab.model")
    return folder, model


def test_texts_and_a_file_in_vectors_out(run_folder, tmp_path, capsys):
    folder, classifier = run_folder
    (tmp_path / "texts.jsonl").write_text(
        json.dumps({"sentence": "It rained all day."}) + "\n\n", encoding="utf-8"
    )
    argv = ["embed", "Emma was handsome.", "She was clever.", "--init", str(folder)]
    argv += ["--input", str(tmp_path / "texts.jsonl"), "--text-field", "sentence"]
    argv += ["--normalize", "--max-seq-length", "16"]
    assert main([*argv, "--output", str(tmp_path / "v.npy")]) == 0
    printed = capsys.readouterr().out
    texts = ["Emma was handsome.", "She was clever.", "It rained all day."]
    model = with_tokenizer(classifier, SPM_MODEL_PATH, 16, normalize=True)
    expected = model.embed(texts)
    got = np.load(tmp_path / "v.npy")
    assert got.dtype == np.float32 and max_abs_diff(got, expected) < 1e-6
    assert (
        "3 texts" in printed and "3 x 64 float32 (mean pooling, normalized)" in printed
    )
    cosine = float(expected[0] @ expected[1])
    assert f"[1]  1.000{cosine:7.3f}" in printed, printed
    # JSON Lines: each text with its vector.
    assert (
        main([*argv[:5], "--pooling", "cls", "--output", str(tmp_path / "v.jsonl")])
        == 0
    )
    rows = [
        json.loads(line) for line in (tmp_path / "v.jsonl").read_text().splitlines()
    ]
    cls = with_tokenizer(classifier, SPM_MODEL_PATH, 128, pooling="cls")
    assert [row["text"] for row in rows] == texts[:2]
    assert (
        max_abs_diff(np.array([r["embedding"] for r in rows]), cls.embed(texts[:2]))
        < 1e-6
    )


def test_a_query_prints_the_closest_texts_first(run_folder, tmp_path, capsys):
    folder, classifier = run_folder
    texts = ["Emma married Mr Knightley.", "It rained in Highbury.", "Harriet wept."]
    (tmp_path / "texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    query = "Who did Emma marry?"
    argv = ["embed", "--init", str(folder), "--input", str(tmp_path / "texts.txt")]
    assert main([*argv, "--query", query, "--top-k", "2"]) == 0
    printed = capsys.readouterr().out
    model = with_tokenizer(classifier, SPM_MODEL_PATH, 128, pooling="mean")
    vectors, found = model.embed(texts), model.embed(query)[0]
    cosine = vectors @ found / np.linalg.norm(vectors, axis=1) / np.linalg.norm(found)
    order = np.argsort(-cosine)
    expected = [f"  {cosine[i]:.3f}  {texts[i]}" for i in order[:2]]
    lines = printed.splitlines()
    start = lines.index(f"Query: {query}")
    assert lines[start + 1 : start + 3] == expected, printed
    assert "Cosine similarity:" not in printed  # a search prints no table


def test_export_alone_writes_a_savedmodel_of_raw_text(run_folder, tmp_path, capsys):
    import tensorflow as tf

    folder, classifier = run_folder
    out = tmp_path / "embedder"
    argv = ["embed", "--init", str(folder), "--export", str(out), "--normalize"]
    assert main(argv) == 0
    assert "Embedded" not in capsys.readouterr().out  # no texts: none embedded
    texts = ["Emma was handsome.", "", "It rained all day in Highbury."]
    served = tf.saved_model.load(str(out)).signatures["serve"]
    got = served(texts=tf.constant(texts))["embeddings"].numpy()
    expected = with_tokenizer(classifier, SPM_MODEL_PATH, 128, normalize=True)
    assert max_abs_diff(got, expected.embed(texts)) < 1e-6
    assert main(argv) == 2  # an existing folder is not overwritten
    assert "exists: name a new folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["x", "--output", "v.txt"], "name a .npy file"),
        (["x", "--init", "albert_tiny"], "preset without released weights"),
        ([], "no text given"),
        (["--input", "missing.txt"], "does not exist"),
        (["x", "--init", "no/such/run"], "does not exist"),
    ],
)
def test_bad_requests_are_refused_by_name(argv, message, capsys):
    assert main(["embed", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("name", ["v.npy", "v.jsonl"])
def test_the_vectors_are_whole_or_absent_after_a_fault(name, monkeypatch, tmp_path):
    from albert_keras.pretraining.embed_cli import write_vectors

    vectors = np.random.default_rng(0).normal(size=(300, 64)).astype("float32")

    def write(folder):
        write_vectors(str(folder) + "/" + name, ["a text"] * 300, vectors)

    assert check_each_write_can_fail(monkeypatch, tmp_path, write) == 1


def test_csv_and_tsv_inputs_are_read_by_column(tmp_path):
    """A header row names the columns (a .csv was read as lines, its header
    a text); a missing column or a short row is refused with the line."""
    from albert_keras.pretraining.fill_mask_cli import read_texts

    (tmp_path / "t.csv").write_text('id,sentence\n1,"Emma, handsome."\n2,\n')
    assert read_texts(str(tmp_path / "t.csv"), "sentence") == ["Emma, handsome.", ""]
    (tmp_path / "t.tsv").write_text("text\tid\nIt rained.\t1\n")
    assert read_texts(str(tmp_path / "t.tsv")) == ["It rained."]
    with pytest.raises(
        ValueError, match=r"no column 'text' \(its header: id, sentence"
    ):
        read_texts(str(tmp_path / "t.csv"))
    (tmp_path / "short.csv").write_text("id,text\n1,a\n2\n")
    with pytest.raises(ValueError, match="line 3 has fewer cells than its header"):
        read_texts(str(tmp_path / "short.csv"))
