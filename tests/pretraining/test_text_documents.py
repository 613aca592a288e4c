"""`hold_out_documents`: whole documents held out, the rest kept for training;
`write_documents` writes the input format back."""

import pytest

from albert_keras.pretraining.text_documents import (
    hold_out_documents,
    read_documents,
    split_sentences,
    write_documents,
)


def _write(path, documents):
    path.write_text(
        "\n\n".join("\n".join(doc) for doc in documents) + "\n", encoding="utf-8"
    )
    return str(path)


def test_every_kth_document_of_each_file_is_held_out_whole(tmp_path):
    first = [[f"a{i} one.", f"a{i} two."] for i in range(7)]
    second = [[f"b{i}."] for i in range(3)]
    files = [_write(tmp_path / "a.txt", first), _write(tmp_path / "b.txt", second)]
    train, held, counts = hold_out_documents(files, str(tmp_path / "split"), every=3)
    assert counts == {
        "a.txt": {"documents": 7, "held_out": 2},
        "b.txt": {"documents": 3, "held_out": 1},
    }
    assert read_documents(held) == [first[2], first[5], second[2]]
    expected = [d for i, d in enumerate(first) if i % 3 != 2] + second[:2]
    assert read_documents(train) == expected
    # The first documents only, for short runs.
    _, held, counts = hold_out_documents(files, str(tmp_path / "s2"), 2, 4)
    assert read_documents(held) == [first[1], first[3], second[1]]
    assert counts["a.txt"] == {"documents": 4, "held_out": 2}


def test_written_documents_read_back_the_same(tmp_path):
    documents = [["Ein Absatz.", "Zweiter, mit ä."], ["Allein."], ["x", "y", "z"]]
    path = str(tmp_path / "docs.txt")
    write_documents(path, documents)
    assert read_documents(path) == documents
    # The exact bytes of the input format: a blank line between documents.
    assert open(path, encoding="utf-8").read() == (
        "Ein Absatz.\nZweiter, mit ä.\n\nAllein.\n\nx\ny\nz\n"
    )


def test_too_few_documents_or_a_bad_period_is_a_clear_error(tmp_path):
    path = _write(tmp_path / "a.txt", [["one."], ["two."]])
    with pytest.raises(ValueError, match="leaves no held-out document.*has 2 doc"):
        hold_out_documents([path], str(tmp_path / "s"), every=3)
    with pytest.raises(ValueError, match="k >= 2"):
        hold_out_documents([path], str(tmp_path / "s"), every=1)
    with pytest.raises(ValueError, match="No input file matches"):
        hold_out_documents([str(tmp_path / "none*.txt")], str(tmp_path / "s"))


def test_files_with_the_same_name_are_counted_apart(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    files = [
        _write(tmp_path / "x" / "news.txt", [[f"x{i}."] for i in range(4)]),
        _write(tmp_path / "y" / "news.txt", [[f"y{i}."] for i in range(6)]),
    ]
    _, held, counts = hold_out_documents(files, str(tmp_path / "split"), every=2)
    assert counts == {
        files[0]: {"documents": 4, "held_out": 2},
        files[1]: {"documents": 6, "held_out": 3},
    }
    assert read_documents(held) == [["x1."], ["x3."], ["y1."], ["y3."], ["y5."]]


def test_a_glob_skips_the_folders_it_matches(tmp_path):
    # 'corpus/*' matching a sub-folder was refused with "'corpus/sub' is a
    # folder; pass the text files in it", the wrong fix for a glob.
    from albert_keras.tokenizers.vocabulary import input_paths

    (tmp_path / "b.txt").write_text("One.\nTwo.\n", encoding="utf-8")
    (tmp_path / "a.txt").mkdir()
    assert input_paths([str(tmp_path / "*.txt")]) == [str(tmp_path / "b.txt")]
    with pytest.raises(ValueError, match="matches only folders"):
        input_paths([str(tmp_path / "a*")])
    with pytest.raises(ValueError, match="is a folder; pass the text files in it"):
        read_documents(str(tmp_path / "a.txt"))  # named, not globbed


def test_utf8_cut_mid_character_is_not_called_latin1(tmp_path):
    # A Chinese corpus sliced with `head -c` ends inside a character: the
    # error said "not UTF-8 text" and advised `iconv -f latin1`, which would
    # turn the whole (UTF-8) text into mojibake.
    path = tmp_path / "zh.txt"
    path.write_bytes("第一回 宴桃园豪杰三结义\n".encode()[:-2])
    with pytest.raises(ValueError, match="cut short") as raised:
        read_documents(str(path))
    assert "latin1" not in str(raised.value)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match="iconv -f latin1"):
        read_documents(str(latin))


def test_split_sentences_cuts_chinese_paragraphs_too(tmp_path):
    # `create-data` warns "pass --split-sentences" when paragraph lines are
    # cut to --max-seq-length; on Chinese text the flag cut nothing (it looked
    # for ". " before a capital), so the warning sent a zh user nowhere.
    paragraph = (
        "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦！"
        "帝曰：“汝何罪而受诛？”帝怒。ALBERT模型很好。 It was late. Emma smiled."
    )
    assert split_sentences(paragraph) == [
        "话说天下大势，分久必合，合久必分。",
        "周末七国分争，并入于秦！",
        "帝曰：“汝何罪而受诛？”",
        "帝怒。",
        "ALBERT模型很好。",
        "It was late.",
        "Emma smiled.",
    ]
    # Runs of marks and closing quotes stay with their sentence; English
    # is cut as before (not after "Mr.").
    assert split_sentences("真的吗？！「好。」Mr. Knightley came. Emma") == [
        "真的吗？！",
        "「好。」",
        "Mr. Knightley came.",
        "Emma",
    ]
    path = tmp_path / "zh.txt"
    path.write_text("一。二！\n三？\n\n四。五\n", encoding="utf-8")
    assert read_documents(str(path), sentences=True) == [
        ["一。", "二！", "三？"],
        ["四。", "五"],
    ]
