"""The tagging task: reading, piece alignment, the loss, conlleval scores, the
text model and SavedModel, and the CLI end to end on Brown POS / name tags."""

import json
import random

import conlleval
import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import TINY_FINETUNING, max_abs_diff, task_file

from albert_keras import AlbertBackbone, AlbertConfig, AlbertTokenClassifier
from albert_keras.cli import main
from albert_keras.models import AlbertTaggerTextModel, with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tasks import Task, TokenClassificationTask
from albert_keras.tasks.data_warnings import data_warnings
from albert_keras.tasks.entity_scores import entity_counts, tag_scores
from albert_keras.tokenizers import AlbertTokenizer
from albert_keras.tokenizers.word_pieces import word_pieces

TRAIN, DEV = (
    task_file("brown_tags", "train.jsonl"),
    task_file("brown_tags", "dev.jsonl"),
)
TOKENIZER = AlbertTokenizer(SPM_MODEL_PATH)
LENGTH = 48


def _records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def _tagger(num_classes, seed=0):
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    keras.utils.set_random_seed(seed)
    return AlbertTokenClassifier(AlbertBackbone(config), num_classes=num_classes)


def test_entity_counts_equal_conlleval_on_random_tags():
    """IOB1, IOB2 and IOBES, well formed or not: the chunk counts of each type
    equal the conlleval package's (a port of conlleval.pl)."""
    rng = random.Random(0)
    tags = ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "E-B", "S-B"]
    for _ in range(400):
        gold = [[rng.choice(tags) for _ in range(rng.randint(1, 9))] for _ in range(3)]
        predicted = [[rng.choice(tags) for _ in sentence] for sentence in gold]
        lines = []
        for g, p in zip(gold, predicted, strict=True):
            lines += [f"w {a} {b}" for a, b in zip(g, p, strict=True)] + [""]
        chunks = conlleval.evaluate(lines)["slots"]["chunks"]
        expected = {
            kind: (s["stats"]["gold"], s["stats"]["pred"], s["stats"]["correct"])
            for kind, s in chunks.items()
            if any(s["stats"].values())
        }
        found = {k: tuple(v) for k, v in entity_counts(gold, predicted).items()}
        assert found == expected, (gold, predicted)


def test_word_pieces_are_the_sentence_pieces():
    """Word by word, the pieces are the whole sentence's; each word's tag sits
    on its first piece (its second after a bare "▁"); an empty word is [UNK]."""
    sentences = [r["words"] for r in _records(DEV)[:40]]
    pieces, positions = word_pieces(TOKENIZER, tf.ragged.constant(sentences))
    whole = TOKENIZER(tf.constant([" ".join(s) for s in sentences]))
    assert pieces.to_list() == whole.to_list()
    space = TOKENIZER.token_to_id("\u2581")
    for words, ids, where in zip(
        sentences, pieces.to_list(), positions.to_list(), strict=True
    ):
        starts = np.cumsum([0] + [len(TOKENIZER(tf.constant([w]))[0]) for w in words])
        for start, end, at in zip(starts[:-1], starts[1:], where, strict=True):
            assert at == start + (ids[start] == space and end - start > 1)
    pieces, positions = word_pieces(TOKENIZER, tf.ragged.constant([["a", "\u200b"]]))
    assert pieces.to_list()[0][-1] == TOKENIZER.special_token_ids["unk"]
    assert positions.to_list() == [[0, 1]]


def test_reading_formats_and_bad_records(tmp_path):
    task = TokenClassificationTask()
    data = task.read(TRAIN, training=True)
    assert task.config.labels == ["O", "B-NAME", "B-TITLE", "I-NAME", "I-TITLE"]
    assert task.monitor == "entity_f1"
    # The same sentences as CoNLL (word, POS, tag columns) and as CSV cells.
    conll = tmp_path / "train.conll"
    rows = ["-DOCSTART- -X- O", ""]
    for r in _records(TRAIN):
        rows += [
            f"{w} {p} {t}"
            for w, p, t in zip(r["words"], r["pos"], r["tags"], strict=True)
        ]
        rows.append("")
    conll.write_text("\n".join(rows))
    csv = tmp_path / "train.csv"
    lines = ["tokens,ner_tags"] + [
        f'"{" ".join(r["words"]).replace(chr(34), 2 * chr(34))}",{" ".join(r["tags"])}'
        for r in _records(TRAIN)
    ]
    csv.write_text("\n".join(lines))
    for path in (conll, csv):
        again = TokenClassificationTask().read(str(path), training=True)
        strip = [{k: e[k] for k in ("words", "tags")} for e in again.examples]
        assert strip == [{k: e[k] for k in ("words", "tags")} for e in data.examples]
    bad = [
        {"words": ["a", "b"], "tags": ["O"]},
        {"words": ["a"], "tags": ["B-XYZ"]},
        {"words": [], "tags": []},
        {"words": ["Ann", "ran"], "tags": ["B-NAME", "O"]},
    ]
    read = task.read(bad)
    assert [e["line"] for e in read.examples] == [4]
    assert dict(read.report.skipped) == {
        "2 words but 1 tags": 1,
        "a tag outside the tag set": 1,
        "no words (words)": 1,
    }
    predicted = task.read(bad[1:2] + [{"words": ["x"]}], require_labels=False)
    assert [e["tags"] for e in predicted.examples] == [None, None]
    with pytest.raises(ValueError, match="Name it with --label-field"):
        TokenClassificationTask().read([{"words": ["a"], "ner": ["O"]}], True)
    with pytest.raises(ValueError, match="Read the training file first"):
        TokenClassificationTask().read([{"words": ["a"], "tags": ["O"]}])
    # CoNLL: a sentence with an untagged word is skipped (its first line);
    # a file of words alone is read to predict.
    odd = tmp_path / "odd.conll"
    odd.write_text("Ann B-NAME\nran O\n\nBob\nsat O\n\nEve B-NAME\n")
    read = task.read(str(odd))
    assert [e["words"] for e in read.examples] == [["Ann", "ran"], ["Eve"]]
    assert read.report.where == {"a word without a tag": [4]}
    words = tmp_path / "words.conll"
    words.write_text("Ann\nran\n\nBob\n")
    read = task.read(str(words), require_labels=False)
    assert [(e["words"], e["tags"]) for e in read.examples] == [
        (["Ann", "ran"], None),
        (["Bob"], None),
    ]
    # Numbered tags in CSV cells ("1 0") index the declared names too.
    named = TokenClassificationTask(labels=["O", "B-NAME"])
    assert named.read([{"words": "a b", "tags": "1 0"}]).examples[0]["tags"] == [1, 0]


def test_integer_tags_index_declared_names():
    """transformers datasets write `ner_tags` as ids into a list of names."""
    task = TokenClassificationTask(labels=["O", "B-PER", "I-PER"])
    data = task.read([{"tokens": ["Ann", "Lee", "ran"], "ner_tags": [1, 2, 0]}])
    assert data.examples[0]["tags"] == [1, 2, 0]
    numbered = TokenClassificationTask()
    data = numbered.read([{"tokens": ["a", "b"], "ner_tags": [3, 0]}], training=True)
    assert numbered.config.labels == [0, 3] and numbered.monitor == "accuracy"
    (told,) = data_warnings(numbered, {"train": data, "dev": data}, 128)
    assert told.startswith("The tags are numbers (0, 3)") and "--labels" in told
    pos = TokenClassificationTask()
    data = pos.read([{"words": ["a"] * 20, "tags": ["X"] * 19 + ["Y"]}], True)
    (told,) = data_warnings(pos, {"train": data, "dev": data}, 128)
    assert told.startswith("95% of the dev words have the tag 'X'")


def test_loss_is_the_mean_over_tagged_words():
    """Keras' loss on the task's batches equals numpy's cross-entropy averaged
    over the words' tagged pieces (positions of weight 0 never count)."""
    task = TokenClassificationTask(sequence_length=LENGTH, tags_field="pos")
    train = task.read(TRAIN, training=True).subset(24, 0)
    model = task.build_model(_tagger(len(task.config.labels)).backbone)
    losses, _ = task.losses()
    model.compile(loss=losses)
    dataset = task.dataset(train, TOKENIZER, batch_size=24)
    loss = model.evaluate(dataset, verbose=0)
    f = train.features
    logits = np.asarray(model.predict(dataset, verbose=0)["logits"], "float64")
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    picked = np.take_along_axis(logp, f["labels"][..., None], -1)[..., 0]
    expected = -(picked * f["weights"]).sum() / f["weights"].sum()
    # Words past 46 pieces are cut: no weight, and counted in the report.
    cut = sum(
        (row[: len(e["words"])] < 0).any()
        for row, e in zip(f["positions"], train.examples, strict=True)
    )
    words = sum(len(e["words"]) for e in train.examples)
    assert f["weights"].sum() == (f["positions"] >= 0).sum() < words
    assert train.report.noted[f"cut to sequence_length={LENGTH}"] == cut > 0
    assert abs(loss - expected) < 1e-5


def test_baselines_and_scores_by_hand():
    task = TokenClassificationTask()
    train = task.read(
        [{"words": ["Ann", "ran", "Ann"], "tags": ["B-NAME", "O", "O"]}] * 2
        + [{"words": ["Ann"], "tags": ["B-NAME"]}] * 3,
        training=True,
    )
    dev = task.read(
        [{"words": ["Ann", "saw", "Bo"], "tags": ["B-NAME", "O", "B-NAME"]}]
    )
    baselines = task.baselines(train, dev)
    # B-NAME is the commonest tag (5 of 9), and Ann's (5 of 7); "saw" and
    # "Bo" are new words: B-NAME too.
    assert baselines["majority_tag"]["accuracy"] == pytest.approx(2 / 3)
    word = baselines["word_majority"]
    assert word["entity_recall"] == 1.0
    assert word["entity_precision"] == pytest.approx(2 / 3)
    scores = tag_scores(
        [["B-X", "I-X", "O"]], [["B-X", "I-X", "B-X"]], ["O", "B-X", "I-X"]
    )
    assert scores["entity_precision"] == 0.5 and scores["entity_recall"] == 1.0


def test_text_model_and_savedmodel_tag_as_the_task(tmp_path):
    """The exported model (sentences in) gives the task's own word logits."""
    task = TokenClassificationTask(sequence_length=LENGTH)
    dev = task.read(DEV, training=True).subset(12, 0)
    model = task.build_model(_tagger(len(task.config.labels), seed=3).backbone)
    logits = task.word_predictions(model, dev, task.dataset(dev, TOKENIZER, 8))
    text_model = with_tokenizer(model, TOKENIZER, LENGTH, tags=task.tag_names())
    assert isinstance(text_model, AlbertTaggerTextModel)
    sentences = [" ".join(e["words"]) for e in dev.examples]
    out = text_model.predict(sentences, verbose=0)
    text_model.export(str(tmp_path / "saved"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    served = loaded.serve(tf.constant(sentences))
    for i, (example, expected) in enumerate(zip(dev.examples, logits, strict=True)):
        n = len(example["words"])
        kept = np.isfinite(expected).all(-1)
        assert max_abs_diff(out["logits"][i, :n][kept], expected[kept]) < 1e-5
        assert (out["tags"][i, :n][~kept] == b"").all()
        names = [task.tag_names()[j].encode() for j in expected[kept].argmax(-1)]
        assert out["tags"][i, :n][kept].tolist() == names
        assert served["tags"][i].numpy().tolist() == out["tags"][i].tolist()
    assert out["words"][0, : len(dev.examples[0]["words"])].tolist() == [
        w.encode() for w in dev.examples[0]["words"]
    ]


def test_cli_finetune_predict_pos_tags(tmp_path):
    """`finetune --task tag` on Brown POS tags beats the majority tag clearly;
    `predict` writes a tag per word and scores them."""
    out = str(tmp_path / "run")
    options = dict(TINY_FINETUNING, epochs=6, max_train_examples=None)
    argv = ["finetune", "--task", "tag", "--train", TRAIN, "--dev", DEV]
    argv += ["--label-field", "pos", "--output-dir", out, "--max-seq-length", "64"]
    for key in ("init", "epochs", "batch_size", "learning_rate", "patience"):
        argv += ["--" + key.replace("_", "-"), str(options[key])]
    assert main(argv + ["--max-dev-examples", "40", "--no-export"]) == 0
    with open(f"{tmp_path}/run/metrics.json") as f:
        result = json.load(f)
    majority = result["baselines"]["majority_tag"]["accuracy"]
    assert result["monitor"] == "accuracy"
    assert result["best"]["accuracy"] > majority + 0.25, result["best"]
    task = Task.from_config(result["task"])
    assert task.config.tags_field == "pos" and len(task.config.labels) == 11
    predict = ["predict", "--model", out, "--input", DEV, "--max-examples", "10"]
    assert main(predict) == 0
    with open(f"{tmp_path}/run/predictions-dev.jsonl") as f:
        lines = [json.loads(line) for line in f]
    with open(f"{tmp_path}/run/predictions-dev.metrics.json") as f:
        scored = json.load(f)
    assert len(lines) == 10 == scored["labelled"]
    assert all(len(x["tags"]) == len(x["words"]) == len(x["scores"]) for x in lines)
    gold = {i + 1: r["pos"] for i, r in enumerate(_records(DEV))}
    hits = [
        t == g for x in lines for t, g in zip(x["tags"], gold[x["line"]], strict=True)
    ]
    assert scored["metrics"]["accuracy"] == pytest.approx(np.mean(hits))
    # CoNLL output, `word gold predicted`: conlleval's tag accuracy is ours.
    conll = str(tmp_path / "dev.conll")
    assert main([*predict, "--output", conll]) == 0
    with open(conll) as f:
        tags = conlleval.evaluate(line.rstrip("\n") for line in f)["overall"]["tags"]
    assert tags["stats"]["gold"] == len(hits)
    assert tags["evals"]["prec"] == pytest.approx(np.mean(hits))
