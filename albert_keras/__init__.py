"""albert-keras: ALBERT (A Lite BERT) for TensorFlow 2 / Keras 3.

The models are imported on first use (`from albert_keras import
AlbertBackbone`), not with the package: data creation
(`albert_keras.pretraining.pretraining_data`) and the configs then run
without loading Keras and TensorFlow, which takes seconds.

Keras loads a `.keras` file of ours once our classes are registered:
`import albert_keras` registers them all as soon as Keras is loaded, whether
Keras was imported before or after the package.
"""

__version__ = "0.1.0"

import importlib as _importlib
import os as _os

# TensorFlow's C++ INFO/WARNING start-up lines drown what users read; set
# TF_CPP_MIN_LOG_LEVEL yourself before importing to see them.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from albert_keras.config import AlbertConfig  # noqa: E402
from albert_keras.lazy_imports import lazy_attributes as _lazy_attributes  # noqa: E402
from albert_keras.lazy_imports import when_imported as _when_imported  # noqa: E402
from albert_keras.presets import PRESETS  # noqa: E402

_LAZY = {
    "AlbertBackbone": "albert_keras.models",
    "AlbertBiEncoder": "albert_keras.models",
    "AlbertClassifier": "albert_keras.models",
    "AlbertMultipleChoice": "albert_keras.models",
    "AlbertTokenClassifier": "albert_keras.models",
    "AlbertPretrainer": "albert_keras.models",
    "AlbertSpanQA": "albert_keras.models",
    "AlbertSquadV2": "albert_keras.models",
}

__all__ = ["PRESETS", "AlbertConfig", *_LAZY]

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)

# Every module defining a Keras class that a `.keras` file can name
# ("albert_keras>AlbertPretrainer"; tests/test_keras_registration.py checks the
# list). `albert_keras.models` holds the text-in models too, where TensorFlow
# is installed.
_KERAS_CLASSES = (
    "albert_keras.layers",
    "albert_keras.models",
    "albert_keras.training.class_weighted_crossentropy",
    "albert_keras.training.dense_adamw",
    "albert_keras.training.fast_lamb",
    "albert_keras.training.in_batch_negatives_loss",
    "albert_keras.training.official_adamw",
    "albert_keras.training.warmup_polynomial_decay",
    "albert_keras.training.warmup_cosine_decay",
)
# The tokenizer layers run in TensorFlow: on JAX or PyTorch without TensorFlow
# the models still load, and only these stay unregistered.
_TENSORFLOW_KERAS_CLASSES = (
    "albert_keras.tokenizers.albert_packer",
    "albert_keras.tokenizers.albert_span_packer",
    "albert_keras.tokenizers.albert_tokenizer",
    "albert_keras.tokenizers.albert_wordpiece_tokenizer",
)


def _register_keras_classes():
    for module in _KERAS_CLASSES:
        _importlib.import_module(module)
    for module in _TENSORFLOW_KERAS_CLASSES:
        try:
            _importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name not in ("tensorflow", "tensorflow_text"):
                raise
            break


# TensorFlow imports Keras half-way through its own import, and so does the
# first module of ours that imports it: registering waits for both, so the
# modules it imports see them whole.
_when_imported(
    "keras", _register_keras_classes, wait_for=("tensorflow", "albert_keras.")
)


# The models' `from_preset` and `save_to_preset` read and write with
# checkpoints_convert, a layer above them: the root, above every layer, hands
# them the two functions (albert_keras/models/preset_loading.py).
def _load_preset(*args, **kwargs):
    from checkpoints_convert.preset_loader import load_preset

    return load_preset(*args, **kwargs)


def _save_preset(*args, **kwargs):
    from checkpoints_convert.preset_loader import save_preset

    return save_preset(*args, **kwargs)


def _install_preset_functions():
    module = _importlib.import_module("albert_keras.models.preset_loading")
    module.set_preset_functions(_load_preset, _save_preset)


_when_imported("albert_keras.models.preset_loading", _install_preset_functions)


# The tokenizers' `from_preset` finds vocabularies the same way
# (albert_keras/tokenizers/tokenizer_base.py).
def _find_vocabulary(preset):
    from checkpoints_convert.backbone_loader import find_vocabulary

    return find_vocabulary(preset, for_tokenizer=True)


def _install_vocabulary_finder():
    module = _importlib.import_module("albert_keras.tokenizers.tokenizer_base")
    module.set_vocabulary_finder(_find_vocabulary)


_when_imported("albert_keras.tokenizers.tokenizer_base", _install_vocabulary_finder)
