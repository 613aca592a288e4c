"""An explicit `--vocab` must be the vocabulary kept beside the model.

A vocabulary of the same size but other tokens was taken silently (the size
check passes), and every token id then meant another piece: a run or a
prediction on garbage. It is now refused, naming both files and the first
id where they differ.
"""

import shutil

import pytest

from albert_keras.sample_text import SPM_MODEL_PATH
from albert_keras.tokenizers.vocabulary_files import vocabulary_tokens
from checkpoints_convert.backbone_loader import find_vocabulary

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "film"]


@pytest.fixture
def run_folder(tmp_path):
    """A run folder as `albert-keras finetune` leaves it: a model and its vocab."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "best.keras").write_bytes(b"")
    shutil.copy(SPM_MODEL_PATH, folder / "vocab.model")
    return folder


def test_another_vocabulary_of_the_same_size_is_refused(run_folder, tmp_path):
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(open(SPM_MODEL_PATH, "rb").read())
    a, b = proto.pieces[100].piece, proto.pieces[101].piece
    proto.pieces[100].piece, proto.pieces[101].piece = b, a
    other = tmp_path / "other" / "30k-clean.model"
    other.parent.mkdir()
    other.write_bytes(proto.SerializeToString())
    tokens = vocabulary_tokens(other)
    assert len(tokens) == 8000 and tokens[100] == b
    with pytest.raises(ValueError) as error:
        find_vocabulary(str(run_folder / "best.keras"), str(other))
    message = str(error.value)
    assert (
        f"{str(other)!r} (8000 tokens) is not the one kept beside the model" in message
    )
    assert str(run_folder / "vocab.model") in message
    assert f"id 100: {b!r} vs {a!r}" in message
    assert "Leave --vocab out" in message


def test_the_same_vocabulary_elsewhere_or_beside_is_taken(run_folder, tmp_path):
    copy = tmp_path / "copy.model"
    shutil.copy(SPM_MODEL_PATH, copy)
    assert find_vocabulary(str(run_folder), str(copy)) == str(copy)
    # A file of the model's own folder is the user's pick among its files.
    beside = run_folder / "vocab.txt"
    beside.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    assert find_vocabulary(str(run_folder), str(beside)) == str(beside)
    # Nothing kept beside: nothing to compare with.
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "model.keras").write_bytes(b"")
    other = tmp_path / "words.txt"
    other.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    assert find_vocabulary(str(bare / "model.keras"), str(other)) == str(other)
