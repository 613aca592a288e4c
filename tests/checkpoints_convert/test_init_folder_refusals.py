"""Folders `--init` cannot use are refused by what they hold, with the fix.

An empty folder was refused as "No vocabulary found beside ...: pass --vocab",
and with --vocab then as a folder of no known kind: it is now refused as that
at once. A folder holding a `.keras` file (a fine-tuning run's `best.keras`)
names that file.
"""

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
