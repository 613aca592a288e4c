"""`albert-keras vocab`: SentencePiece and WordPiece vocabularies from real text."""

import argparse

import pytest
import sentencepiece as spm
import tensorflow as tf
from albert_test_case import corpus_paragraphs
from official_tokenization import official_ids, official_wordpiece_ids

from albert_keras.tokenizers import AlbertTokenizer, AlbertWordPieceTokenizer
from albert_keras.tokenizers.vocab_cli import add_parser


def vocab(argv):
    parser = argparse.ArgumentParser(prog="albert-keras")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["vocab", *argv])
    return args.run(args)


def corpus(tmp_path, name, count):
    lines = [line.strip() for line in corpus_paragraphs(name)]
    path = tmp_path / name
    path.write_text("\n".join(lines[:count]), encoding="utf-8")
    return str(path), lines[count : count + 300]


def test_sentencepiece_vocabulary_with_the_official_layout(tmp_path, capsys):
    path, held_out = corpus(tmp_path, "en_austen.txt", 2000)
    out = str(tmp_path / "v" / "spm")
    assert vocab(["--input", path, "--output", out, "--size", "1000"]) == 0
    assert "[CLS]=2" in capsys.readouterr().out
    processor = spm.SentencePieceProcessor(model_file=out + ".model")
    assert [processor.id_to_piece(i) for i in range(5)] == [
        "<pad>",
        "<unk>",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    ]
    assert processor.vocab_size() == 1000 and processor.bos_id() == -1
    assert processor.is_control(2) and processor.piece_to_id("(") == 5
    ids = AlbertTokenizer(out + ".model")(tf.constant(held_out)).to_list()
    assert ids == official_ids(out + ".model", held_out, True)
    # Lowercased training text: no capital letter in any piece.
    pieces = [processor.id_to_piece(i) for i in range(5, 1000)]
    assert not any(c.isupper() for p in pieces for c in p)


def test_cased_sentencepiece(tmp_path):
    path, _ = corpus(tmp_path, "en_austen.txt", 1500)
    out = str(tmp_path / "cased")
    assert vocab(["--input", path, "--output", out, "--size", "800", "--cased"]) == 0
    processor = spm.SentencePieceProcessor(model_file=out + ".model")
    pieces = [processor.id_to_piece(i) for i in range(800)]
    assert any(c.isupper() for p in pieces for c in p)


def test_wordpiece_vocabulary_with_the_release_layout(tmp_path, capsys):
    # tests/data holds eight chapters (117 paragraphs): 40 to train, 77 held out.
    path, held_out = corpus(tmp_path, "zh_sanguo.txt", 40)
    out = str(tmp_path / "zh")
    assert (
        vocab(
            ["--input", path, "--output", out, "--size", "3000", "--kind", "wordpiece"]
        )
        == 0
    )
    assert "[UNK]=100 [CLS]=101" in capsys.readouterr().out
    tokens = open(out + ".txt", encoding="utf-8").read().split("\n")[:-1]
    assert tokens[0] == "[PAD]" and tokens[100:104] == [
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    ]
    assert len(tokens) <= 3000 and len(set(tokens)) == len(tokens)
    ids = AlbertWordPieceTokenizer(out + ".txt")(tf.constant(held_out)).to_list()
    assert ids == official_wordpiece_ids(out + ".txt", held_out, True)
    unknown = sum(row.count(100) for row in ids) / sum(len(row) for row in ids)
    assert held_out and unknown < 0.1  # characters the 40 lines never show


def test_bad_input_is_rejected_with_the_fix(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n   \n")
    with pytest.raises(ValueError, match="corpus is empty"):
        vocab(["--input", str(empty), "--output", str(tmp_path / "x")])
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\u00e9 cr\u00e8me\n".encode("latin-1") * 10)
    with pytest.raises(ValueError, match="not UTF-8 text.*iconv"):
        vocab(["--input", str(latin), "--output", str(tmp_path / "x")])
    # Chinese sliced with `head -c` ends inside a character: the file is
    # UTF-8 (iconv would not help); say so, as create-data does.
    cut = tmp_path / "zh.txt"
    cut.write_bytes("天下大势，分久必合。\n".encode() * 10 + "合久必分".encode()[:-1])
    with pytest.raises(ValueError) as raised:
        vocab(
            [
                "--input",
                str(cut),
                "--output",
                str(tmp_path / "x"),
                "--kind",
                "wordpiece",
            ]
        )
    assert str(raised.value) == (
        f"{str(cut)!r} ends in the middle of a UTF-8 character (byte 319, "
        "line 11): it was cut short (head -c?). Cut whole lines instead, e.g. "
        "`head -n 1000`."
    )
    small = tmp_path / "small.txt"
    small.write_text("a few words only\n" * 20)
    with pytest.raises(ValueError, match="Vocabulary size too high"):
        vocab(
            ["--input", str(small), "--output", str(tmp_path / "x"), "--size", "5000"]
        )
    # (As create-data says it: the same `input_paths`.)
    with pytest.raises(ValueError, match="No input file matches .*missing.txt"):
        vocab(
            ["--input", str(tmp_path / "missing.txt"), "--output", str(tmp_path / "x")]
        )
    # Through the `albert-keras` command: status 2 and the message, no traceback.
    from albert_keras.cli import main

    assert main(["vocab", "--input", str(empty), "--output", str(tmp_path / "x")]) == 2
    assert "corpus is empty" in capsys.readouterr().err


def test_a_vocabulary_too_large_for_the_text_leaves_no_folder(tmp_path, capsys):
    # The output folder was made before SentencePiece refused the size:
    # `vocab` left an empty folder, and `pretrain --vocab-size` a run folder
    # holding only .lock and an empty data/.
    from albert_keras.cli import main

    text = tmp_path / "two.txt"
    text.write_text("First sentence here.\nSecond one there.\n", encoding="utf-8")
    argv = ["--input", str(text), "--size", "50"]
    with pytest.raises(ValueError, match="fewer pieces"):
        vocab([*argv, "--output", str(tmp_path / "new" / "spm")])
    assert not (tmp_path / "new").exists()
    run = tmp_path / "run"
    args = ["pretrain", "--input", str(text), "--vocab-size", "50"]
    assert main([*args, "--preset", "tiny", "--steps", "1", "--output-dir", str(run)])
    assert "fewer pieces" in capsys.readouterr().err
    assert not run.exists()


def test_wordpiece_characters_fill_the_room_longer_pieces_leave(tmp_path):
    # Chinese words are single characters, so few longer pieces exist; the
    # alphabet was still cut to half of --size: 300 characters seen, --size
    # 404 (300 after the reserved tokens), and 150 of them became [UNK] in a
    # vocabulary of 254 tokens.
    chars = [chr(0x4E00 + i) for i in range(300)]
    lines = [
        "".join(c * (300 - i) for i, c in enumerate(chars[j::7])) for j in range(7)
    ]
    (tmp_path / "zh.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = str(tmp_path / "zh")
    vocab(
        [
            "--input",
            str(tmp_path / "zh.txt"),
            "--output",
            out,
            "--kind",
            "wordpiece",
            "--size",
            "404",
        ]
    )
    tokens = open(out + ".txt", encoding="utf-8").read().split("\n")[:-1]
    reserved = ["[PAD]", *[f"[unused{i}]" for i in range(1, 100)]]
    assert tokens == reserved + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars
    # With Latin words too: the most frequent characters first, to the last
    # token of --size; with room for them all, every character is in.
    lines.append("hello world, hello there. " * 50 + "wordpiece words")
    (tmp_path / "mixed.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    mixed = ["--input", str(tmp_path / "mixed.txt"), "--output", out]
    vocab(mixed + ["--kind", "wordpiece", "--size", "404"])
    tokens = open(out + ".txt", encoding="utf-8").read().split("\n")[:-1]
    assert tokens[104:] == chars
    vocab(mixed + ["--kind", "wordpiece", "--size", "450"])
    tokens = open(out + ".txt", encoding="utf-8").read().split("\n")[:-1]
    latin = sorted(set("hello world, hello there. wordpiece words") - {" "})
    inner = ["##" + c for c in latin if c.isalpha()]
    assert sorted(tokens[104:]) == sorted(chars + latin + inner)
