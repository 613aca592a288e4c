"""ALBERT models: the backbone and the task models (see README.md here)."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_bi_encoder import AlbertBiEncoder
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_distribution import (
    albert_distribution,
    albert_layout_map,
)
from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.albert_span_qa import AlbertSpanQA
from albert_keras.models.albert_squad_v2 import AlbertSquadV2
from albert_keras.models.albert_token_classifier import AlbertTokenClassifier
from albert_keras.models.gradient_checkpointing import gradient_checkpointing

try:  # the text-in models run the tokenizer in TensorFlow (tensorflow-text)
    from albert_keras.models.albert_choice_text_model import AlbertChoiceTextModel
    from albert_keras.models.albert_embedding_text_model import (
        AlbertEmbeddingTextModel,
    )
    from albert_keras.models.albert_fill_mask_text_model import (
        AlbertFillMaskTextModel,
    )
    from albert_keras.models.albert_span_text_model import AlbertSpanTextModel
    from albert_keras.models.albert_tagger_text_model import AlbertTaggerTextModel
    from albert_keras.models.albert_text_model import AlbertTextModel, with_tokenizer
except ModuleNotFoundError as _error:  # JAX or PyTorch without TensorFlow
    if _error.name not in ("tensorflow", "tensorflow_text"):
        raise

__all__ = [
    "AlbertChoiceTextModel",
    "AlbertEmbeddingTextModel",
    "AlbertFillMaskTextModel",
    "AlbertSpanTextModel",
    "AlbertTaggerTextModel",
    "AlbertTextModel",
    "with_tokenizer",
    "AlbertBackbone",
    "AlbertBiEncoder",
    "AlbertClassifier",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertSpanQA",
    "AlbertSquadV2",
    "AlbertTokenClassifier",
    "albert_distribution",
    "albert_layout_map",
    "gradient_checkpointing",
]
