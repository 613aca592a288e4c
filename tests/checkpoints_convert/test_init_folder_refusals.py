"""Folders `--init` cannot use are refused by what they hold, with the fix.

An empty folder was refused as "No vocabulary found beside ...: pass --vocab",
and with --vocab then as a folder of no known kind: it is now refused as that
at once. A folder holding a `.keras` file (a fine-tuning run's `best.keras`)
names that file.
"""

import tarfile

import pytest

from checkpoints_convert.backbone_loader import find_vocabulary, load_backbone
from checkpoints_convert.conversion_error import ConversionError


def test_a_folder_without_a_model_is_refused_as_such_not_for_its_vocabulary(
    tmp_path,
):
    with pytest.raises(ConversionError, match="Cannot tell what .* no files"):
        find_vocabulary(str(tmp_path))


def test_a_folder_holding_a_keras_file_names_it(tmp_path):
    (tmp_path / "best.keras").write_bytes(b"")
    (tmp_path / "metrics.json").write_text("{}")
    with pytest.raises(ConversionError) as error:
        load_backbone(str(tmp_path), 8000)
    assert f"Pass its model file: {tmp_path / 'best.keras'}." in str(error.value)


def test_a_run_folder_stands_for_its_model(tmp_path):
    """`--init runs/pretrain` took the pretraining run's model, but `--init`
    of a fine-tuning run's folder was refused ("Pass its model file")."""
    from checkpoints_convert.backbone_loader import resolve_init

    (tmp_path / "best.keras").write_bytes(b"")
    (tmp_path / "settings.json").write_text("{}")
    assert resolve_init(str(tmp_path)) == str(tmp_path / "best.keras")
    (tmp_path / "pretrainer.keras").write_bytes(b"")  # a pretraining run's first
    assert resolve_init(str(tmp_path)) == str(tmp_path / "pretrainer.keras")


@pytest.mark.parametrize(
    "part, what",
    [
        ("backup", "holds the fine-tuning backups"),
        ("backup/epoch-0001", "is inside the fine-tuning backups"),
        ("savedmodel", "holds the SavedModel"),
        ("checkpoints", "holds the pretraining checkpoints"),
    ],
)
def test_a_folder_inside_a_run_names_the_run_model(tmp_path, part, what):
    """`--init run1/backup` was "Cannot tell what ... is", and `albert-convert
    run1/savedmodel` (whose variables/ looks like a TF1 Hub module) or
    `runs/pretrain/checkpoints` (*.index) called them TF2 checkpoints."""
    from checkpoints_convert import load_official_checkpoint

    run = tmp_path / "run1"
    for folder in (part, "savedmodel/variables", "checkpoints"):
        (run / folder).mkdir(parents=True, exist_ok=True)
    (run / "best.keras").write_bytes(b"")
    (run / "savedmodel" / "variables" / "variables.index").write_bytes(b"")
    (run / "checkpoints" / "ckpt-4.index").write_bytes(b"")
    message = f"{what} .* of the run .*run1', not a model: pass the run's model, "
    for load in (find_vocabulary, load_official_checkpoint):
        with pytest.raises(ConversionError, match=message + ".*run1/best.keras'"):
            load(str(run / part))


def test_a_release_folder_kept_in_a_run_is_no_part_of_it(tmp_path):
    from checkpoints_convert.preset_sources import run_part

    (tmp_path / "best.keras").write_bytes(b"")
    (tmp_path / "release").mkdir()
    (tmp_path / "backup").mkdir()
    assert run_part(tmp_path / "release") is None
    assert run_part(tmp_path / "backup") is not None
    (tmp_path / "best.keras").unlink()  # no run model: a folder named backup
    assert run_part(tmp_path / "backup") is None


def test_a_missing_init_without_a_hint_ends_its_sentence():
    from checkpoints_convert.backbone_loader import resolve_init

    with pytest.raises(FileNotFoundError) as error:
        resolve_init("no_such_model_here")
    assert str(error.value).endswith("albert_xxlarge_zh).")


@pytest.mark.parametrize("part", ["checkpoints", "data", "logs"])
def test_a_folder_kept_under_a_run_part_is_no_part_of_it(tmp_path, part):
    """`run/checkpoints/albert_base_v2/` (a release or keras-hub preset kept
    there, beside the run's best.keras) was refused as "inside the pretraining
    checkpoints": only backup/ and savedmodel/ have subfolders of the run."""
    from checkpoints_convert.preset_sources import run_part

    (tmp_path / "best.keras").write_bytes(b"")
    (tmp_path / part / "albert_base_v2").mkdir(parents=True)
    assert run_part(tmp_path / part / "albert_base_v2") is None
    assert run_part(tmp_path / part) is not None
    (tmp_path / "backup" / "epoch-0001").mkdir(parents=True)
    assert run_part(tmp_path / "backup" / "epoch-0001") is not None


def test_a_packed_zh_release_names_its_wordpiece_vocabulary(tmp_path):
    # The refusal named only 30k-clean.model (and --vocab to a Python
    # caller): a `*_zh` release holds vocab_chinese.txt.
    packed = tmp_path / "albert_base_zh.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        (tmp_path / "albert_config.json").write_text("{}")
        tar.add(tmp_path / "albert_config.json", arcname="albert_base_zh/x.json")
    with pytest.raises(FileNotFoundError) as error:
        find_vocabulary(str(packed))
    assert str(error.value) == (
        f"{str(packed)!r} is a packed release: unpack it (tar xzf) and pass the "
        "folder, or pass --vocab with the vocabulary in it (30k-clean.model, or "
        "vocab_chinese.txt in a *_zh release)."
    )
    with pytest.raises(FileNotFoundError) as error:
        find_vocabulary(str(packed), for_tokenizer=True)
    assert str(error.value) == (
        f"{str(packed)!r} is a packed release: unpack it (tar xzf) and pass the "
        "folder, or build the tokenizer from the vocabulary in it: "
        "AlbertTokenizer('30k-clean.model'), or "
        "AlbertWordPieceTokenizer('vocab_chinese.txt') for a *_zh release."
    )
