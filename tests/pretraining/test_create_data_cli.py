"""`albert-keras create-data`: flags, a run, errors."""

import argparse
import gzip
import os

from albert_keras.pretraining import create_data_cli


def parser():
    top = argparse.ArgumentParser(prog="albert-keras")
    subparsers = top.add_subparsers(dest="command", required=True)
    create_data_cli.add_parser(subparsers)
    create_data_cli.add_parser(subparsers)  # registering twice is harmless
    return top


def test_flags_map_to_the_python_api():
    args = parser().parse_args(
        [
            "create-data",
            "--input",
            "a.txt",
            "b/*.txt",
            "--output",
            "out/",
            "--no-lowercase",
            "--max-seq-length",
            "128",
            "--max-predictions-per-seq",
            "19",
            "--masked-lm-prob",
            "0.2",
            "--short-seq-prob",
            "0",
            "--dupe-factor",
            "3",
            "--ngram",
            "2",
            "--no-do-whole-word-mask",
            "--random-next-sentence",
            "--seed",
            "9",
            "--num-shards",
            "4",
            "--num-workers",
            "2",
        ]
    )
    assert args.input == ["a.txt", "b/*.txt"] and args.output == "out/"
    assert create_data_cli.data_options(args) == dict(
        vocab=None,
        lowercase=False,
        max_seq_length=128,
        max_predictions_per_seq=19,
        masked_lm_prob=0.2,
        short_seq_prob=0.0,
        dupe_factor=3,
        ngram=2,
        do_whole_word_mask=False,
        random_next_sentence=True,
        seed=9,
        num_shards=4,
        num_workers=2,
    )
    defaults = parser().parse_args(["create-data", "--output", "o"])
    assert (defaults.max_seq_length, defaults.max_predictions_per_seq) == (512, 20)
    assert defaults.lowercase and defaults.do_whole_word_mask
    assert (defaults.short_seq_prob, defaults.masked_lm_prob) == (0.1, 0.15)


def test_run_writes_shards_and_prints_stats(tmp_path, capsys):
    from albert_keras.sample_text import CORPUS_PATH

    with gzip.open(CORPUS_PATH, "rt", encoding="utf-8") as f:
        text = f.read(40_000).rsplit("\n\n", 1)[0]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text + "\n", encoding="utf-8")
    args = parser().parse_args(
        [
            "create-data",
            "--input",
            str(corpus),
            "--output",
            str(tmp_path / "out") + "/",
            "--max-seq-length",
            "128",
            "--num-shards",
            "2",
        ]
    )
    assert args.run(args) == 0
    printed = capsys.readouterr().out
    assert "create-data: 100%" in printed and "instances from" in printed
    assert "n-gram spans 1:" in printed
    assert sorted(os.listdir(tmp_path / "out")) == [
        "part-00000-of-00002.tfrecord",
        "part-00001-of-00002.tfrecord",
    ]


def test_errors_through_the_albert_keras_command(tmp_path, capsys):
    from albert_keras.cli import main

    code = main(
        ["create-data", "--input", str(tmp_path / "none*.txt"), "--output", "o/"]
    )
    assert code == 2
    assert "No input file matches" in capsys.readouterr().err
    good = tmp_path / "good.txt"
    good.write_text("One line.\nTwo lines.\n", encoding="utf-8")
    code = main(
        ["create-data", "--input", str(good), "--output", "o/", "--max-seq-length", "3"]
    )
    assert code == 2
    assert "max_seq_length" in capsys.readouterr().err


def test_a_second_run_with_other_shards_does_not_mix_with_the_first(tmp_path, capsys):
    # A 1-shard run, then a 2-shard run into the same folder left
    # part-00000-of-00001.tfrecord beside the new shards: --records 'out/*'
    # read the first run's instances too.
    from albert_keras.cli import main

    corpus = tmp_path / "corpus.txt"
    text = "\n\n".join(
        f"Sentence {i} of a.\nAnd another {i}.\nEnd {i}." for i in range(9)
    )
    corpus.write_text(text, encoding="utf-8")
    out = str(tmp_path / "out") + "/"
    argv = ["create-data", "--input", str(corpus), "--output", out, "--quiet"]
    assert main([*argv, "--max-seq-length", "32"]) == 0
    assert main([*argv, "--max-seq-length", "32"]) == 0  # the same shards: rewritten
    capsys.readouterr()
    assert main([*argv, "--max-seq-length", "32", "--num-shards", "2"]) == 2
    error = capsys.readouterr().err
    assert "part-00000-of-00001.tfrecord" in error and "another --output" in error
    assert os.listdir(tmp_path / "out") == ["part-00000-of-00001.tfrecord"]
    prefix = str(tmp_path / "out" / "wiki")
    argv = ["create-data", "--input", str(corpus), "--output", prefix, "--quiet"]
    assert main([*argv, "--max-seq-length", "32"]) == 0
    assert main([*argv, "--num-shards", "-1"]) == 2  # refused, no IndexError
    assert "num_shards" in capsys.readouterr().err
    assert main([*argv, "--max-seq-length", "32", "--num-shards", "3"]) == 2
    assert "wiki-00000-of-00001.tfrecord" in capsys.readouterr().err


def test_a_refused_input_leaves_no_output_folder(tmp_path, capsys):
    # The --output folder was made before the input was read: an empty corpus
    # (or one of a single line) left an empty folder behind.
    from albert_keras.cli import main

    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    out = tmp_path / "new" / "out"
    assert main(["create-data", "--input", str(empty), "--output", f"{out}/"]) == 2
    assert "No training instance" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["empty.txt"]
    (tmp_path / "kept").mkdir()  # a folder that was there stays
    argv = ["create-data", "--input", str(empty), "--output", f"{tmp_path}/kept/"]
    assert main(argv) == 2
    assert os.path.isdir(tmp_path / "kept")
