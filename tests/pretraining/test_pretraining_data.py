"""create_pretraining_data end to end: official format, SOP order, seeds, errors."""

import gzip
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from albert_keras.pretraining.corpus_tokenizer import CorpusTokenizer
from albert_keras.pretraining.pretraining_data import (
    create_pretraining_data,
    format_stats,
)
from albert_keras.pretraining.pretraining_dataset import pretraining_dataset

CLS, SEP, MASK = 2, 3, 4


@pytest.fixture(scope="module")
def tokenizer():
    return CorpusTokenizer()  # the embedded austen-8k.model, lowercased


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 150 kB of real text: the first chapters of the embedded Austen."""
    from albert_keras.sample_text import CORPUS_PATH

    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(150_000)
    path = tmp_path_factory.mktemp("corpus") / "austen.txt"
    path.write_text(text.rsplit("\n\n", 1)[0] + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def records(corpus, tokenizer, tmp_path_factory):
    out = tmp_path_factory.mktemp("records")
    stats = create_pretraining_data(
        [corpus],
        str(out) + "/",
        tokenizer=tokenizer,
        max_seq_length=64,
        max_predictions_per_seq=10,
        split_sentences=True,
        dupe_factor=2,
        seed=3,
        verbose=False,
    )
    return out, stats


def read_all(pattern, length=64, predictions=10):
    data = pretraining_dataset(pattern, 100_000, length, predictions, training=False)
    return {k: v.numpy() for k, v in next(iter(data)).items()}


def originals(batch):
    """`input_ids` with the masked positions restored from `masked_lm_ids`."""
    ids = batch["input_ids"].copy()
    real = batch["masked_lm_weights"] > 0
    rows = np.repeat(np.arange(len(ids)), real.sum(axis=1))
    ids[rows, batch["masked_lm_positions"][real]] = batch["masked_lm_ids"][real]
    return ids


def test_official_reader_reads_our_records(records, tmp_path):
    # tests/pretraining/official_reader.py runs the official
    # `run_pretraining.input_fn_builder` (its `name_to_features` spec and
    # `_decode_record`) under TF1 compatibility, in its own process.
    out, _ = records
    script = os.path.join(os.path.dirname(__file__), "official_reader.py")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    pattern = str(out / "*.tfrecord")
    subprocess.run(
        [sys.executable, script, pattern, "64", "10", "16", str(tmp_path / "o.npz")],
        check=True,
        env=env,
        capture_output=True,
    )
    theirs = np.load(tmp_path / "o.npz")
    ours = next(iter(pretraining_dataset(pattern, 16, 64, 10, training=False)))
    assert set(theirs.files) == set(ours)
    for key in theirs.files:
        assert np.array_equal(theirs[key], ours[key].numpy()), key


def test_features_masking_and_stats(records):
    out, stats = records
    batch = read_all(str(out / "*.tfrecord"))
    ids, mask, segments = batch["input_ids"], batch["input_mask"], batch["segment_ids"]
    n = len(ids)
    assert n == stats["instances"] > 500
    lengths = mask.sum(axis=1)
    original = originals(batch)
    for row in range(n):
        length = lengths[row]
        seps = np.flatnonzero(original[row, :length] == SEP)
        assert original[row, 0] == CLS and len(seps) == 2 and seps[1] == length - 1
        assert (segments[row, : seps[0] + 1] == 0).all()
        assert (segments[row, seps[0] + 1 : length] == 1).all()
        assert (ids[row, length:] == 0).all() and (segments[row, length:] == 0).all()
    real = batch["masked_lm_weights"] > 0
    rows = np.repeat(np.arange(n), real.sum(axis=1))
    positions = batch["masked_lm_positions"][real]
    labels = batch["masked_lm_ids"][real]
    assert (positions > 0).all() and (positions < lengths[rows]).all()
    assert not np.isin(labels, [CLS, SEP]).any()
    # 15% of the pieces (round(length * 0.15) <= 10 per row), 80/10/10.
    assert abs(stats["masked_fraction"] - 0.15) < 0.01
    assert stats["masked"] == real.sum() and stats["tokens"] == lengths.sum()
    new = ids[rows, positions]
    assert abs(np.mean(new == MASK) - 0.8) < 0.02
    assert abs(np.mean(new == labels) - 0.1) < 0.02
    assert stats["label_0"] + stats["label_1"] == n
    assert abs(stats["label_1"] / n - 0.5) < 0.05
    spans = stats["ngram_lengths"]
    total = sum(spans.values())
    shares = np.array([spans[k] / total for k in (1, 2, 3)])
    # With a budget of about 10 pieces a drawn 3-gram is often shortened to
    # fit (as in the official code), so short spans gain on 1/n = .55/.27/.18
    # (the 1/n draw itself: test_ngram_masker.py).
    assert shares[0] > shares[1] > shares[2] > 0.08, shares
    assert "instances" in format_stats(stats)


def test_whole_words_on_real_text(records):
    out, _ = records
    batch = read_all(str(out / "*.tfrecord"))
    boundary = read_all_boundaries(str(out / "*.tfrecord"))
    original = originals(batch)
    checked = 0
    for row in range(len(original)):
        chosen = set(
            batch["masked_lm_positions"][row][batch["masked_lm_weights"][row] > 0]
        )
        # The official grouping: a piece starts a word if its boundary is 1
        # or no word has started yet; [CLS]/[SEP] are skipped (so a piece
        # right after the middle [SEP] may continue the word before it).
        words = []
        for i in range(1, int(batch["input_mask"][row].sum())):
            if original[row, i] in (CLS, SEP):
                continue
            if boundary[row, i] or not words:
                words.append([i])
            else:
                words[-1].append(i)
        for word in words:
            masked = [i in chosen for i in word]
            assert all(masked) or not any(masked), (row, word)
            checked += len(word) > 1 and all(masked)
    assert checked > 100


def read_all_boundaries(pattern):
    import tensorflow as tf

    spec = {"token_boundary": tf.io.FixedLenFeature([64], tf.int64)}
    data = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).batch(100_000)
    return tf.io.parse_example(next(iter(data)), spec)["token_boundary"].numpy()


@pytest.fixture(scope="module")
def indexed_corpus(tokenizer, tmp_path_factory):
    """Documents whose lines are made of one word each, unique to (doc, line)."""
    candidates = [
        p[1:]
        for p in tokenizer.pieces
        if p.startswith("\u2581") and p[1:].isascii() and p[1:].isalpha()
        if len(p) >= 5
    ]
    ids, lengths = tokenizer.encode(candidates)
    single = [w for w, n in zip(candidates, lengths, strict=True) if n == 1]
    words = single[:400]
    word_id = dict(zip(words, tokenizer.encode(words)[0].tolist(), strict=True))
    docs, where = [], {}
    for d in range(25):
        lines = []
        for line in range(16):
            word = words[d * 16 + line]
            where[word_id[word]] = (d, line)
            lines.append(" ".join([word] * 5))
        docs.append("\n".join(lines))
    path = tmp_path_factory.mktemp("indexed") / "indexed.txt"
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return str(path), where


def sides(row_ids, where):
    seps = np.flatnonzero(row_ids == SEP)
    a = [where[t] for t in row_ids[1 : seps[0]] if t in where]
    b = [where[t] for t in row_ids[seps[0] + 1 : seps[1]] if t in where]
    return a, b


@pytest.mark.parametrize("random_next_sentence", [False, True])
def test_pair_order_and_labels(
    indexed_corpus, tokenizer, tmp_path, random_next_sentence
):
    path, where = indexed_corpus
    stats = create_pretraining_data(
        [path],
        str(tmp_path / "pairs.tfrecord"),
        tokenizer=tokenizer,
        max_seq_length=40,
        max_predictions_per_seq=6,
        dupe_factor=4,
        random_next_sentence=random_next_sentence,
        verbose=False,
    )
    batch = read_all(str(tmp_path / "pairs.tfrecord"), 40, 6)
    labels = batch["next_sentence_labels"][:, 0]
    for row_ids, label in zip(originals(batch), labels, strict=True):
        a, b = sides(row_ids, where)
        assert a and b
        same_document = {d for d, _ in a} == {d for d, _ in b} and len({*a, *b}) > 0
        if random_next_sentence and label == 1:
            assert {d for d, _ in a}.isdisjoint({d for d, _ in b})  # NSP: random
            continue
        assert same_document and len({d for d, _ in a + b}) == 1
        first, second = (a, b) if label == 0 else (b, a)
        assert max(line for _, line in first) <= min(line for _, line in second)
    assert 0.4 < labels.mean() < 0.6
    assert stats["instances"] == len(labels)


def test_same_seed_same_bytes_and_shards(corpus, tokenizer, tmp_path):
    def run(seed, name, shards=1):
        stats = create_pretraining_data(
            [corpus],
            str(tmp_path / name) + "/",
            tokenizer=tokenizer,
            max_seq_length=64,
            num_shards=shards,
            seed=seed,
            verbose=False,
        )
        return [open(f, "rb").read() for f in stats["files"]]

    first = run(7, "a")
    assert first == run(7, "b")
    assert first != run(8, "c")
    shards = run(7, "d", shards=3)
    assert len(shards) == 3 and all(shards)
    assert sorted(shards)[0] != first[0]
    # The same records, dealt round-robin: total size and count agree.
    assert sum(len(s) for s in shards) == len(first[0])
    n = [len(read_all(str(p), 64, 20)["input_ids"]) for p in (tmp_path / "d").iterdir()]
    assert max(n) - min(n) <= 1


@pytest.mark.slow
def test_workers_write_the_same_bytes(corpus, tmp_path):
    text = open(corpus, encoding="utf-8").read()
    inputs = []
    for i, part in enumerate(text.split("\n\n", 6)[:2]):
        path = tmp_path / f"in{i}.txt"
        path.write_text(part + "\n", encoding="utf-8")
        inputs.append(str(path))
    inputs.append(corpus)
    outputs = []
    for workers in (1, 2):
        stats = create_pretraining_data(
            inputs,
            str(tmp_path / f"w{workers}") + "/",
            max_seq_length=64,
            num_shards=2,
            num_workers=workers,
            verbose=False,
        )
        outputs.append([open(f, "rb").read() for f in stats["files"]])
    assert outputs[0] == outputs[1]


def test_wordpiece_vocabulary(tmp_path):
    words = "the cat sat on mat a dog ran far away and then came back home".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + words
    vocab += ["##s", "##ed", "##ing"]
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    text = "\n\n".join(
        "\n".join(
            f"The cats sat on the mat {i}. A dog ranning far away."
            for i in range(j, j + 6)
        )
        for j in range(0, 60, 6)
    )
    corpus = tmp_path / "c.txt"
    corpus.write_text(text + "\n", encoding="utf-8")
    stats = create_pretraining_data(
        [str(corpus)],
        str(tmp_path / "wp.tfrecord"),
        vocab=str(vocab_file),
        max_seq_length=32,
        max_predictions_per_seq=5,
        verbose=False,
    )
    batch = read_all(str(tmp_path / "wp.tfrecord"), 32, 5)
    original = originals(batch)
    assert original.max() < len(vocab) and stats["instances"] == len(original)
    assert (original == vocab.index("##s")).any()  # "cats" -> cat ##s
    boundary = read_all_boundaries_wp(str(tmp_path / "wp.tfrecord"))
    assert (boundary[original == vocab.index("##s")] == 0).all()
    assert (boundary[original == vocab.index("cat")] == 1).all()


def read_all_boundaries_wp(pattern):
    import tensorflow as tf

    spec = {"token_boundary": tf.io.FixedLenFeature([32], tf.int64)}
    data = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).batch(100_000)
    return tf.io.parse_example(next(iter(data)), spec)["token_boundary"].numpy()


def test_gzip_input_and_prefix_output(tokenizer, tmp_path):
    from albert_keras.sample_text import CORPUS_PATH

    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(30_000).rsplit("\n\n", 1)[0]
    path = tmp_path / "small.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    stats = create_pretraining_data(
        [str(path)],
        str(tmp_path / "out" / "austen"),
        tokenizer=tokenizer,
        max_seq_length=128,
        num_shards=2,
        verbose=False,
    )
    assert [os.path.basename(f) for f in stats["files"]] == [
        "austen-00000-of-00002.tfrecord",
        "austen-00001-of-00002.tfrecord",
    ]
    assert stats["instances"] > 10 and stats["bytes"] == os.path.getsize(path)


def test_bad_input(tokenizer, tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("One line here.\nAnother line there.\n", encoding="utf-8")
    out = str(tmp_path / "o") + "/"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="No training instance"):
        create_pretraining_data([str(empty)], out, tokenizer=tokenizer, verbose=False)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("first line\ncaf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"not UTF-8 text \(byte 14, line 2.*iconv"):
        create_pretraining_data([str(latin)], out, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="No input file matches"):
        create_pretraining_data([str(tmp_path / "nope*.txt")], out)
    with pytest.raises(ValueError, match="is a folder"):
        create_pretraining_data([str(tmp_path)], out, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="max_seq_length=4"):
        create_pretraining_data([str(good)], out, max_seq_length=4)
    with pytest.raises(ValueError, match="dupe_factor=0"):
        create_pretraining_data([str(good)], out, dupe_factor=0)
    with pytest.raises(ValueError, match="masked_lm_prob"):
        create_pretraining_data([str(good)], out, masked_lm_prob=2.0)
    not_model = tmp_path / "vocab.model"
    not_model.write_text("hello")
    with pytest.raises(ValueError, match="not a readable SentencePiece model"):
        create_pretraining_data([str(good)], out, vocab=str(not_model))
    with pytest.raises(ValueError, match="not found"):
        create_pretraining_data([str(good)], out, vocab=str(tmp_path / "x.model"))
    # A one-word document cannot make a pair: skipped and counted, the rest
    # is written.
    one_word = tmp_path / "one_word.txt"
    one_word.write_text("Emma\n\nOne line here.\nAnother line there.\n")
    stats = create_pretraining_data(
        [str(one_word), str(empty)], out, tokenizer=tokenizer, verbose=False
    )
    assert stats["skipped_segments"] >= 1 and stats["instances"] >= 1
    assert stats["empty_files"] == 1
    assert not [f for f in os.listdir(out) if ".tmp-" in f]  # no leftovers


def test_tf_free_path_writes_what_the_tf_tokenizer_and_writer_wrote(
    corpus, tokenizer, tmp_path
):
    # The previous path: the in-graph AlbertTokenizer in tf.data and
    # tf.io.TFRecordWriter. The default now: sentencepiece in Python and the
    # NumPy writer. Same seed, same bytes.
    import tensorflow as tf

    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tokenizers import AlbertTokenizer

    assert not tokenizer.in_graph
    in_graph = CorpusTokenizer(tokenizer=AlbertTokenizer(SPM_MODEL_PATH))
    assert in_graph.in_graph
    outputs = {}
    for name, corpus_tokenizer in (("python", tokenizer), ("graph", in_graph)):
        stats = create_pretraining_data(
            [corpus],
            str(tmp_path / f"{name}.tfrecord"),
            tokenizer=corpus_tokenizer,
            max_seq_length=128,
            dupe_factor=2,
            seed=11,
            verbose=False,
        )
        outputs[name] = open(stats["files"][0], "rb").read()
    assert outputs["python"] == outputs["graph"]
    records = [
        r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "graph.tfrecord"))
    ]
    assert len(records) == stats["instances"] > 300
    with tf.io.TFRecordWriter(str(tmp_path / "tf.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    assert (tmp_path / "tf.tfrecord").read_bytes() == outputs["python"]


def test_sentencepiece_path_imports_no_tensorflow(corpus, tokenizer, tmp_path):
    # `albert-keras create-data` in a fresh process: neither TensorFlow nor
    # Keras is imported, and the bytes are those written in this process.
    script = (
        "import sys\n"
        "from albert_keras.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('LOADED', [m for m in ('tensorflow', 'keras', 'tensorflow_text')"
        " if m in sys.modules])\n"
        "sys.exit(code)\n"
    )
    out = tmp_path / "cli.tfrecord"
    args = ["create-data", "--input", corpus, "--output", str(out)]
    args += ["--max-seq-length", "64", "--seed", "5", "--quiet"]
    result = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "LOADED []" in result.stdout, result.stdout
    stats = create_pretraining_data(
        [corpus],
        str(tmp_path / "here.tfrecord"),
        tokenizer=tokenizer,
        max_seq_length=64,
        seed=5,
        verbose=False,
    )
    assert out.read_bytes() == open(stats["files"][0], "rb").read()
    assert f"{stats['instances']} instances" in result.stdout


@pytest.mark.parametrize("num_workers", [1, 2])
def test_arrays_are_the_records_without_serialization(
    corpus, tokenizer, tmp_path, num_workers
):
    """create_pretraining_arrays: what a single shard holds, read by tf.data."""
    from albert_keras.pretraining.pretraining_data import create_pretraining_arrays

    # Two input files (two seeds' streams, run in two processes with 2 workers).
    text = open(corpus, encoding="utf-8").read().split("\n\n")
    half = len(text) // 2
    files = []
    for i, part in enumerate((text[:half], text[half:])):
        files.append(str(tmp_path / f"part{i}.txt"))
        with open(files[-1], "w", encoding="utf-8") as f:
            f.write("\n\n".join(part) + "\n")
    options = dict(
        max_seq_length=64,
        max_predictions_per_seq=10,
        split_sentences=True,
        dupe_factor=2,
        seed=5,
        num_workers=num_workers,
        verbose=False,
    )
    vocab = None  # the embedded austen-8k.model
    stats = create_pretraining_data(
        files, str(tmp_path / "one.tfrecord"), vocab, num_shards=1, **options
    )
    features, array_stats = create_pretraining_arrays(files, vocab, **options)
    records = read_all(str(tmp_path / "one.tfrecord"))
    import tensorflow as tf

    spec = {"token_boundary": tf.io.FixedLenFeature([64], tf.int64)}
    records["token_boundary"] = np.stack(
        [
            tf.io.parse_single_example(r, spec)["token_boundary"].numpy()
            for r in tf.data.TFRecordDataset(str(tmp_path / "one.tfrecord"))
        ]
    )
    assert set(features) == set(records)
    assert len(features["input_ids"]) == stats["instances"] > 100
    for key, value in records.items():
        ours = features[key].reshape(value.shape)
        assert ours.dtype in (np.int32, np.float32), key
        assert np.array_equal(ours, value), key
    same = {k: v for k, v in stats.items() if k not in ("files", "seconds")}
    assert {k: array_stats[k] for k in same if "per_s" not in k} == {
        k: v for k, v in same.items() if "per_s" not in k
    }


def test_arrays_refuse_the_file_options(corpus):
    from albert_keras.pretraining.pretraining_data import create_pretraining_arrays

    with pytest.raises(TypeError, match="writes no files"):
        create_pretraining_arrays([corpus], num_shards=2)


def test_text_on_one_line_says_how_little_of_it_the_instances_hold(tmp_path):
    # A file with no line breaks made 1 instance of 32 pieces from all its
    # text, reported as a success with nothing to say the rest was cut off.
    words = "the cat sat on a mat and then it ran to the big red house".split()
    text = ". ".join(" ".join(words[i % 7 :]) for i in range(300))
    (tmp_path / "one.txt").write_text(text, encoding="utf-8")
    stats = create_pretraining_data(
        [str(tmp_path / "one.txt")], str(tmp_path / "o") + "/", max_seq_length=32
    )
    assert stats["instances"] <= 2 and stats["pieces"] > 2000
    summary = format_stats(stats)
    count = stats["instances"]  # "1 instances from 1 documents" before
    assert summary.startswith(f"{count} instance{'s' * (count != 1)} from 1 document ")
    assert re.search(
        r"warning: the instances hold [\d.]+% of the text's \d+ pieces", summary
    )
    assert "--split-sentences" in summary
    (tmp_path / "lines.txt").write_text(text.replace(". ", ".\n"), encoding="utf-8")
    stats = create_pretraining_data(
        [str(tmp_path / "lines.txt")], str(tmp_path / "p") + "/", max_seq_length=32
    )
    assert "warning" not in format_stats(stats)


def test_a_vocabulary_that_does_not_fit_the_text_is_warned_of(tmp_path):
    # Chinese text with the embedded English austen-8k.model: each run of
    # characters became one <unk>, and create-data reported success.
    docs = ["今天天气很好，我们去公园吧。\n北京是中国的首都，人口很多。"] * 6
    (tmp_path / "zh.txt").write_text("\n\n".join(docs), encoding="utf-8")
    stats = create_pretraining_data(
        [str(tmp_path / "zh.txt")], str(tmp_path / "o") + "/", max_seq_length=32
    )
    summary = format_stats(stats)
    assert stats["unknown"] > 0 and "warning: " in summary
    assert re.search(r"[\d.]+% of the text's pieces are unknown", summary)
    assert "--vocab-size" in summary and "--kind wordpiece" in summary


def test_a_killed_run_leaves_no_per_file_temporary_a_glob_reads(
    corpus, tokenizer, tmp_path, monkeypatch
):
    """Each input file's records went to `out/part-...tfrecord.tmp-PID-00000`
    until the shards were dealt: a kill before that left them, visible, and
    `--records 'out/*'` trained on them. They are hidden now, as a shard's
    own temporary, so `record_files` leaves them out."""
    from albert_keras.pretraining import pretraining_data
    from albert_keras.pretraining.record_lengths import record_files

    out = tmp_path / "out"
    seen = {}

    def merge(temp_paths, outputs):  # the moment a kill would leave them
        seen["temps"] = [p for p in temp_paths if os.path.exists(p)]
        seen["read"] = record_files(str(out / "*"))
        raise KeyboardInterrupt

    monkeypatch.setattr(pretraining_data, "merge_shards", merge)
    with pytest.raises(KeyboardInterrupt):
        create_pretraining_data(
            [corpus], str(out) + "/", tokenizer=tokenizer, verbose=False
        )
    assert len(seen["temps"]) == 1 and seen["read"] == []
