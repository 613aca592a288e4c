"""albert-keras: ALBERT (A Lite BERT) for TensorFlow 2 / Keras 3.

The models are imported on first use (`from albert_keras import
AlbertBackbone`), not with the package: data creation
(`albert_keras.pretraining.pretraining_data`) and the configs then run
without loading Keras and TensorFlow, which takes seconds. Keras loads a
`.keras` file of ours once our classes are registered: `import albert_keras`
registers them when Keras is already imported (`import keras` first, as
most scripts do); otherwise import `albert_keras.models` (or the class) before
`keras.saving.load_model`.
"""

__version__ = "0.1.0"

import importlib as _importlib
import importlib.util as _importlib_util
import os as _os
import sys as _sys

# TensorFlow's C++ INFO/WARNING start-up lines drown what users read; set
# TF_CPP_MIN_LOG_LEVEL yourself before importing to see them.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from albert_keras.config import AlbertConfig  # noqa: E402
from albert_keras.presets import PRESETS  # noqa: E402

_LAZY = {
    "AlbertBackbone": "albert_keras.models",
    "AlbertClassifier": "albert_keras.models",
    "AlbertMultipleChoice": "albert_keras.models",
    "AlbertPretrainer": "albert_keras.models",
    "AlbertSpanQA": "albert_keras.models",
    "AlbertSquadV2": "albert_keras.models",
}

__all__ = [
    "PRESETS",
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertConfig",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
    "AlbertSquadV2",
]


def __getattr__(name):
    # PEP 562: `albert_keras.AlbertBackbone` imports the models (and Keras)
    # only when asked for.
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    # `albert_keras.models.AlbertBackbone` after a bare `import albert_keras`,
    # as when the package imported its subpackages itself.
    if not name.startswith("_") and _importlib_util.find_spec(f"albert_keras.{name}"):
        return _importlib.import_module(f"albert_keras.{name}")
    raise AttributeError(f"module 'albert_keras' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


# Keras finds the classes of a `.keras` file by their registered names
# ("albert_keras>AlbertPretrainer"): with Keras already loaded, registering
# them costs a few milliseconds, so `import keras; import albert_keras;
# keras.saving.load_model(...)` works.
if "keras" in _sys.modules:
    _importlib.import_module("albert_keras.models")
    # The tokenizer layers and text-in models (the classes, capitalized).
    # They run in TensorFlow: on JAX or PyTorch without TensorFlow installed
    # the models still load, and only these stay unregistered.
    _tokenizers = _importlib.import_module("albert_keras.tokenizers")
    for _name, _module in _tokenizers._LAZY.items():
        if _name[0].isupper():
            try:
                _importlib.import_module(_module)
            except ImportError as _error:
                if _error.name != "tensorflow":
                    raise
                break
