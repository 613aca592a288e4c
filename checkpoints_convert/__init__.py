"""Official google-research ALBERT TF1 checkpoints <-> albert-keras models.

Also Hugging Face transformers ALBERT folders (`config.json` +
`model.safetensors`), read and written under the same name table.

Example:
>>> from checkpoints_convert import load_official_checkpoint
>>> model = load_official_checkpoint(  # doctest: +SKIP
...     "albert_base_v2", model="pretrainer"
... )
"""

from checkpoints_convert.checkpoint_reader import CheckpointReader
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_checkpoint_reader import HFCheckpointReader
from checkpoints_convert.hf_writer import save_hf_checkpoint
from checkpoints_convert.loader import (
    MODELS,
    ConversionReport,
    load_official_checkpoint,
)
from checkpoints_convert.name_table import NAME_TABLE, official_weights
from checkpoints_convert.writer import save_official_checkpoint

__all__ = [
    "MODELS",
    "NAME_TABLE",
    "CheckpointReader",
    "ConversionError",
    "ConversionReport",
    "HFCheckpointReader",
    "load_official_checkpoint",
    "official_weights",
    "save_hf_checkpoint",
    "save_official_checkpoint",
]
