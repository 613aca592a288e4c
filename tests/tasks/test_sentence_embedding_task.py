"""`--task embed`: reading pairs, the retrieval scores and baselines against
brute-force references, the packed batches, a run's scores recomputed from
its exported model, and the CLI (finetune, predict, embed) end to end."""

import itertools
import json
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, task_file, tiny_finetune

from albert_keras import AlbertBackbone, AlbertConfig
from albert_keras.cli import main
from albert_keras.pretraining.embed_cli import embedding_run_pooling
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import SentenceEmbeddingTask
from albert_keras.tasks.retrieval_scores import (
    candidate_texts,
    random_baseline,
    retrieval_scores,
    tfidf_baseline,
    vector_ranks,
)
from albert_keras.tasks.task_datasets import embedding_dataset
from albert_keras.tokenizers import AlbertTokenizer
from albert_keras.tokenizers.albert_packer import AlbertPacker

TOKENIZER = AlbertTokenizer(SPM_MODEL_PATH)


def _claims(split):
    """vitaminc's supported claims, each with the evidence it was checked on."""
    with open(task_file("vitaminc", f"{split}.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    return [
        {"query": r["text_b"], "positive": r["text_a"]}
        for r in rows
        if r["label"] == "True"
    ]


def test_read_finds_the_fields_and_shares_ids_of_equal_positives():
    task = SentenceEmbeddingTask()
    data = task.read(
        [
            {"anchor": "a1", "positive": "p", "negative": "n1"},
            {"anchor": "a2", "positive": "q", "negative": "n2"},
            {"anchor": "a3", "positive": "p", "negative": ""},
            {"anchor": "a4", "negative": "n4"},
        ]
    )
    assert task.config.text_fields == ("anchor", "positive", "negative")
    assert [e["positive_id"] for e in data.examples] == [0, 1]
    assert data.report.skipped == {"negative: empty text": 1, "no positive": 1}
    again = SentenceEmbeddingTask(text_fields=("anchor", "positive")).read(
        [{"anchor": "a1", "positive": "p"}, {"anchor": "a3", "positive": "p"}]
    )
    assert [e["positive_id"] for e in again.examples] == [0, 0]
    with pytest.raises(ValueError, match="--text-pair-field"):
        SentenceEmbeddingTask().read([{"title": "x", "body": "y"}])
    with pytest.raises(ValueError, match="two keys or more"):
        SentenceEmbeddingTask(text_fields=("query",))


def test_retrieval_scores_equal_a_sorting_reference():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(40, 25))
    relevant = rng.integers(0, 25, 40)
    ranks = [
        1 + list(np.argsort(-row)).index(r)
        for row, r in zip(scores, relevant, strict=True)
    ]
    found = retrieval_scores(scores, relevant)
    assert found["mrr"] == pytest.approx(np.mean(1 / np.array(ranks)), abs=1e-12)
    assert found["accuracy"] == np.mean(np.array(ranks) == 1)
    assert found["recall_at_10"] == np.mean(np.array(ranks) <= 10)
    vectors = rng.normal(size=(40, 8))
    candidates = rng.normal(size=(25, 8))
    chunked = vector_ranks(vectors, candidates, relevant)
    assert chunked[0].tolist() == [
        1 + int((row > row[r]).sum())
        for row, r in zip(vectors @ candidates.T, relevant, strict=True)
    ]


def test_random_baseline_is_the_mean_over_every_order():
    for m in (1, 3, 5):
        ranks = [p.index(0) + 1 for p in itertools.permutations(range(m))]
        expected = random_baseline(m)
        assert expected["mrr"] == pytest.approx(np.mean(1 / np.array(ranks)))
        assert expected["accuracy"] == pytest.approx(np.mean(np.array(ranks) == 1))


def test_tfidf_baseline_equals_a_dense_reference():
    """Smoothed idf, tf x idf rows of unit length, cosine: the ranks a dense
    word-count matrix gives, on the vitaminc claims and evidence."""
    examples = [{"texts": [e["query"], e["positive"]]} for e in _claims("dev")]
    texts, _, relevant = candidate_texts(examples)
    anchors = [e["texts"][0] for e in examples]
    found = tfidf_baseline(anchors, texts, relevant)
    vocab = sorted({w for t in texts for w in tfidf_words(t)})
    column = {w: i for i, w in enumerate(vocab)}

    def counts(text):
        row = np.zeros(len(vocab))
        for w in tfidf_words(text):
            if w in column:
                row[column[w]] += 1
        return row

    c = np.stack([counts(t) for t in texts])
    idf = np.log((1 + len(texts)) / (1 + (c > 0).sum(axis=0))) + 1
    unit = lambda m: m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-300)  # noqa: E731
    scores = unit(np.stack([counts(a) for a in anchors]) * idf) @ unit(c * idf).T
    expected = retrieval_scores(np.round(scores, 12), relevant)
    assert found == pytest.approx(expected, abs=1e-9)
    assert found["accuracy"] > 0.5  # the claims quote their evidence


def tfidf_words(text):
    return re.findall(r"[\u3400-\u9fff\uf900-\ufaff]|\w+", text.lower())


def test_embedding_batches_pack_each_text_alone():
    examples = [
        {"texts": ["A short query.", "A much longer positive passage here."],
         "positive_id": 0},
        {"texts": ["Another.", "Its own positive."], "positive_id": 1},
        {"texts": ["A third query.", "A short query."], "positive_id": 2},
    ]  # fmt: skip
    batches = list(embedding_dataset(examples, TOKENIZER, 64, 2))
    features, ids = batches[0]
    assert ids.numpy().tolist() == [0, 1]
    flat = [t for e in examples[:2] for t in e["texts"]]
    alone = AlbertPacker(64)(TOKENIZER(tf.constant(flat)))
    longest = int(alone["padding_mask"].numpy().sum(axis=1).max())
    width = -(-longest // 8) * 8  # the longest text, rounded up to 8
    assert features["token_ids"].shape == (2, 2, width) and width < 32
    for key in ("token_ids", "segment_ids", "padding_mask"):
        found = features[key].numpy().reshape(4, width)
        assert found.tolist() == alone[key].numpy()[:, :width].tolist()
    assert batches[1][1].numpy().tolist() == [2]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """`SentenceEmbeddingTask.fit` on the vitaminc claims from a random tiny
    backbone, two epochs, exported."""
    folder = tmp_path_factory.mktemp("embed") / "run"
    keras.utils.set_random_seed(0)
    backbone = AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=8000))
    task = SentenceEmbeddingTask(sequence_length=64, pooling="mean")
    result = task.fit(
        backbone, _claims("train"), _claims("dev"), str(folder),
        vocab=SPM_MODEL_PATH, epochs=2, batch_size=16, learning_rate=1e-3,
        jit_compile=False, verbose=0,
    )  # fmt: skip
    return task, result, folder


def test_run_scores_are_the_exported_models(fitted):
    """The best epoch's dev MRR, accuracy and recall recomputed from the
    SavedModel's vectors (raw text in); the loss fell; TF-IDF and random
    baselines reported."""
    task, result, folder = fitted
    assert result["monitor"] == "mrr"
    assert result["epochs"]["loss"][1] < result["epochs"]["loss"][0]
    served = tf.saved_model.load(str(folder / "savedmodel"))
    dev = _claims("dev")
    texts = list(dict.fromkeys(e["positive"] for e in dev))
    relevant = [texts.index(e["positive"]) for e in dev]
    q = served.serve(tf.constant([e["query"] for e in dev]))["embeddings"].numpy()
    c = served.serve(tf.constant(texts))["embeddings"].numpy()
    assert max_abs_diff(np.linalg.norm(q, axis=1), 1.0) < 1e-5
    expected = retrieval_scores(q @ c.T, relevant)
    for name in ("mrr", "accuracy", "recall_at_10"):
        assert result["best"][name] == pytest.approx(expected[name], abs=1e-6)
    assert set(result["baselines"]) == {"random", "tfidf"}
    assert result["baselines"]["random"]["accuracy"] == pytest.approx(1 / len(texts))


def test_cli_trains_predicts_and_embeds(tmp_path, capsys):
    """finetune --task embed (hard negatives, cls pooling), then predict and
    embed read the run: predict's ranks give its metrics, embed pools as
    the run did."""
    claims = _claims("train")[:24]
    rows = [
        {"anchor": r["query"], "positive": r["positive"],
         "negative": claims[(i + 1) % len(claims)]["positive"]}
        for i, r in enumerate(claims)
    ]  # fmt: skip
    assert tiny_finetune(tmp_path, rows, "--task", "embed", "--pooling", "cls",
                         "--batch-size", "8", "--symmetric") == 0  # fmt: skip
    run = tmp_path / "run"
    settings = json.loads((run / "settings.json").read_text())["task"]
    assert settings["config"]["text_fields"] == ["anchor", "positive", "negative"]
    assert embedding_run_pooling(str(run)) == "cls"
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(run), "--input",
                 str(tmp_path / "train.jsonl"), "--output", str(out)]) == 0  # fmt: skip
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    ranks = np.array([x["rank"] for x in lines])
    metrics = json.loads((tmp_path / "p.metrics.json").read_text())["metrics"]
    assert metrics["mrr"] == pytest.approx(np.mean(1 / ranks))
    assert all(x["best_similarity"] >= x["similarity"] for x in lines)
    capsys.readouterr()
    assert main(["embed", "--init", str(run), "A cat.", "A dog."]) == 0
    assert "(cls pooling, normalized)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--task", "classify", "--pooling", "cls"],
         "--task classify does not read --pooling: they shape the sentence"),
        (["--task", "embed", "--text-field", "anchor"],
         "--task embed names its texts together"),
        (["--task", "embed", "--label-smoothing", "0.1"],
         "--task embed does not read --label-smoothing"),
        (["--task", "embed", "--classifier-dropout", "0.2"],
         "its model has no head"),
        (["--task", "embed", "--batch-size", "1"],
         "--batch-size 1: each anchor is trained against the other examples"),
    ],
)  # fmt: skip
def test_cli_refuses_what_embed_cannot_do(tmp_path, capsys, flags, message):
    rows = [{"anchor": f"query {i}", "positive": f"answer {i}"} for i in range(4)]
    assert tiny_finetune(tmp_path, rows, *flags) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    assert not os.path.exists(tmp_path / "run" / "best.keras")
