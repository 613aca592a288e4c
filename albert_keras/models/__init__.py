"""ALBERT models: the backbone and the task models (see README.md here)."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.albert_span_qa import AlbertSpanQA
from albert_keras.models.albert_squad_v2 import AlbertSquadV2

# The optimizer and schedule that `albert-keras pretrain` and `finetune` compile
# with: registered here too, so that their `.keras` files load compiled after
# `import albert_keras.models` (both modules need only Keras).
from albert_keras.training import fast_lamb as _fast_lamb  # noqa: F401
from albert_keras.training import warmup_polynomial_decay as _schedule  # noqa: F401

try:  # the text-in models run the tokenizer in TensorFlow (tensorflow-text)
    from albert_keras.models.albert_choice_text_model import AlbertChoiceTextModel
    from albert_keras.models.albert_span_text_model import AlbertSpanTextModel
    from albert_keras.models.albert_text_model import AlbertTextModel, with_tokenizer
except ModuleNotFoundError as _error:  # JAX or PyTorch without TensorFlow
    if _error.name not in ("tensorflow", "tensorflow_text"):
        raise

__all__ = [
    "AlbertChoiceTextModel",
    "AlbertSpanTextModel",
    "AlbertTextModel",
    "with_tokenizer",
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
    "AlbertSquadV2",
]
