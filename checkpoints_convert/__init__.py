"""Official google-research ALBERT TF1 checkpoints <-> albert-keras models.

Also Hugging Face transformers ALBERT folders (`config.json` +
`model.safetensors`), read and written under the same name table.

Example:
>>> from checkpoints_convert import load_official_checkpoint
>>> model = load_official_checkpoint(  # doctest: +SKIP
...     "albert_base_v2", model="pretrainer"
... )
"""

from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes

# PEP 562: each piece is imported when first asked for, so the modules that
# need no TensorFlow (`hf_names`, used by bench_accelerator.py) work without it.
_LAZY = {
    "CheckpointReader": "checkpoints_convert.checkpoint_reader",
    "ConversionError": "checkpoints_convert.conversion_error",
    "ConversionReport": "checkpoints_convert.conversion_report",
    "HFCheckpointReader": "checkpoints_convert.hf_checkpoint_reader",
    "MODELS": "checkpoints_convert.loader",
    "ModelGardenCheckpointReader": "checkpoints_convert.model_garden_reader",
    "NAME_TABLE": "checkpoints_convert.name_table",
    "load_official_checkpoint": "checkpoints_convert.loader",
    "official_weights": "checkpoints_convert.official_layout",
    "save_hf_checkpoint": "checkpoints_convert.hf_writer",
    "save_official_checkpoint": "checkpoints_convert.writer",
}
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
