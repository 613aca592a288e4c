"""Official google-research ALBERT TF1 checkpoints <-> albert-keras models."""

from checkpoints_convert.converter import (
    MODELS,
    load_official_checkpoint,
    save_official_checkpoint,
)
from checkpoints_convert.official_checkpoint import OfficialCheckpoint

__all__ = [
    "MODELS",
    "OfficialCheckpoint",
    "load_official_checkpoint",
    "save_official_checkpoint",
]
