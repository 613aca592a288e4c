"""`albert-keras vocab` and `pretrain --vocab-size` read what create-data reads.

Globs, `.gz` files, a UTF-8 BOM and lines longer than SentencePiece's
sentence limit (a file with no line breaks), each on a few KB of text.
"""

import argparse
import gzip
import random

import pytest
import sentencepiece as spm

from albert_keras.tokenizers.vocab_cli import add_parser
from albert_keras.tokenizers.vocabulary import read_lines, train_sentencepiece

WORDS = (
    "the cat sat on a mat and then it ran to the big red house where many "
    "people lived quietly every morning before breakfast"
).split()


def sentences(count, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(count)]


def vocab(argv):
    parser = argparse.ArgumentParser(prog="albert-keras")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["vocab", *argv])
    return args.run(args)


def pieces(model):
    processor = spm.SentencePieceProcessor(model_file=model)
    return [processor.id_to_piece(i) for i in range(processor.vocab_size())]


def test_globs_gzip_and_a_bom_are_read_as_create_data_reads_them(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_bytes(
        b"\xef\xbb\xbf" + "\r\n".join(sentences(40, 1)).encode() + b"\r\n"
    )
    with gzip.open(folder / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(["zebrafish zebrafish zebrafish."] * 30 + sentences(40, 2)))
    (folder / "sub.txt").mkdir()  # a folder the glob also matches
    lines = read_lines([str(folder / "*.txt*")])
    assert lines[0][0].isalpha()  # no BOM
    assert not any("\ufeff" in line or "\r" in line for line in lines)
    assert "zebrafish zebrafish zebrafish." in lines
    out = str(tmp_path / "v")
    assert vocab(["--input", str(folder / "*"), "--output", out, "--size", "45"]) == 0
    assert any("z" in piece for piece in pieces(out + ".model"))  # from the .gz


def test_a_glob_that_matches_nothing_names_it(tmp_path):
    with pytest.raises(ValueError, match="No input file matches .*nothing"):
        read_lines([str(tmp_path / "nothing*.txt")])


def test_a_file_without_line_breaks_is_refused_with_the_fix(tmp_path, capsys):
    # 40 KB on one line, over SentencePiece's 4192-byte sentence limit: the
    # trainer skipped it and failed with "[!sentences_.empty()]".
    (tmp_path / "one.txt").write_text(" ".join(sentences(400)), encoding="utf-8")
    with pytest.raises(ValueError, match="Every line .*longer than 4192 .*on a line"):
        train_sentencepiece(tmp_path / "one.txt", str(tmp_path / "v"), 40)
    # With other lines beside it, the long one is left out, as spm_train
    # does, and the warning says how much of the text that is.
    lines = sentences(200) + [" ".join(sentences(100))]
    (tmp_path / "mixed.txt").write_text("\n".join(lines), encoding="utf-8")
    train_sentencepiece(tmp_path / "mixed.txt", str(tmp_path / "v"), 40)
    assert "1 of 201 lines (34% of the text) are longer" in capsys.readouterr().err


def test_too_large_a_vocabulary_names_the_flag(tmp_path):
    (tmp_path / "small.txt").write_text("\n".join(sentences(20)), encoding="utf-8")
    with pytest.raises(ValueError, match="value <= .*fewer pieces .*--vocab-size"):
        train_sentencepiece(tmp_path / "small.txt", str(tmp_path / "v"), 5000)


def test_pretrain_vocab_size_reads_a_glob_of_gzip_files(tmp_path, capsys):
    # `pretrain --input 'corpus/*.gz' --vocab-size N` without --held-out-every
    # passed the glob on as a file name: "Cannot read 'corpus/*.gz'".
    from albert_keras.pretraining.pretrain_inputs import prepare_text, run_vocabulary

    (tmp_path / "corpus").mkdir()
    with gzip.open(tmp_path / "corpus" / "a.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(sentences(60)))
    args = argparse.Namespace(
        input=[str(tmp_path / "corpus" / "*.gz")],
        held_out_every=None,
        vocab_size=40,
        vocab=None,
        init_checkpoint=None,
        lowercase=True,
    )
    train_files, held = prepare_text(args, str(tmp_path / "data"))
    path = run_vocabulary(args, str(tmp_path / "data"), train_files)
    assert held is None and len(pieces(path)) == 40


def test_an_output_ending_in_model_is_the_model_file(tmp_path, capsys):
    # --output v.model wrote v.model.model and v.model.vocab, so the
    # --vocab v.model the user then passed did not exist.
    (tmp_path / "c.txt").write_text("\n".join(sentences(60)), encoding="utf-8")
    out = str(tmp_path / "v.model")
    assert (
        vocab(["--input", str(tmp_path / "c.txt"), "--output", out, "--size", "40"])
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "v.model", "v.vocab"]
    assert f"wrote {out} " in capsys.readouterr().out
