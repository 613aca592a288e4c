"""A model, an archive or UTF-16 passed where text is read is named as such.

Before, `vocab --input model.keras`, `pretrain --input model.keras` and
`finetune --train model.keras` said "not UTF-8 text" and suggested iconv, which
cannot help: the file is not text in any encoding.
"""

import gzip
import zipfile

import pytest

from albert_keras.cli import main
from albert_keras.pretraining.text_documents import read_documents
from albert_keras.tasks.jsonl_records import read_records
from albert_keras.tokenizers.binary_files import binary_kind
from albert_keras.tokenizers.vocabulary import read_lines


def _files(tmp_path):
    model = tmp_path / "model.keras"
    with zipfile.ZipFile(model, "w") as z:
        z.writestr("config.json", "{}")
    packed = tmp_path / "albert_base.tar"
    packed.write_bytes(gzip.compress(b"albert_base/model.ckpt-best.index\0\0\0"))
    utf16 = tmp_path / "letters.txt"
    utf16.write_bytes("Emma wrote.\n".encode("utf-16"))  # with its BOM
    nul = tmp_path / "shard.tfrecord"
    nul.write_bytes(b"\x0f\x00\x00\x00\x00\x00\x00\x00text")
    return {
        model: "a zip archive",
        packed: "gzip-compressed",
        utf16: "UTF-16 text (convert it: iconv -f utf-16",
        nul: "a binary or UTF-16 file",
    }


def test_each_reader_names_what_the_file_is(tmp_path):
    for path, kind in _files(tmp_path).items():
        for read in (read_lines, read_documents, read_records):
            with pytest.raises(ValueError, match="is " + kind.replace("(", r"\(")):
                read(str(path))


def test_text_is_still_text(tmp_path):
    text = tmp_path / "emma.txt"
    text.write_text("Emma Woodhouse, handsome, clever, and rich.\n", encoding="utf-8")
    assert binary_kind(text.read_bytes()) is None
    assert read_lines(str(text)) == ["Emma Woodhouse, handsome, clever, and rich."]
    assert read_documents(str(text)) == [
        ["Emma Woodhouse, handsome, clever, and rich."]
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["vocab", "--input", "{model}", "--output", "{tmp}/v", "--size", "100"],
        ["pretrain", "--input", "{model}", "--output-dir", "{tmp}/run"],
        ["finetune", "--task", "classify", "--train", "{model}", "--dev", "{model}"]
        + ["--output-dir", "{tmp}/f", "--init", "albert_tiny"],
    ],
)
def test_the_cli_refuses_a_model_given_as_text(tmp_path, capsys, command):
    model = tmp_path / "model.keras"
    with zipfile.ZipFile(model, "w") as z:
        z.writestr("config.json", "{}")
    args = [a.format(model=model, tmp=tmp_path) for a in command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"'{model}' is a zip archive (a .keras model" in err
    assert "iconv" not in err and "Traceback" not in err
