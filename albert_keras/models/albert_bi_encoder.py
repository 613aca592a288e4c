"""`AlbertBiEncoder`: one unit-length vector per text, for contrastive training."""

from __future__ import annotations

import keras

from albert_keras.config_checks import is_positive_int
from albert_keras.models.albert_multiple_choice import _MergeChoices
from albert_keras.models.embedding_pooling import check_pooling, normalized, pool
from albert_keras.models.model_arguments import check_backbone
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertBiEncoder(TaskModel):
    """A sentence encoder over several texts per example (a bi-encoder).

    Inputs are the backbone inputs with a text axis, [batch, texts,
    length]: each text is packed alone (`[CLS] text [SEP]`) and runs
    through the same backbone; its final hidden states are pooled
    (`embedding_pooling.pool`) and scaled to unit length. The output is
    `{"embeddings": [batch, texts, hidden size]}` float32; there is no
    head, so the backbone is all that trains. With
    `InBatchNegativesLoss`, text 0 is an anchor (a query), text 1 its
    positive and texts 2... hard negatives. `AlbertEmbeddingTextModel`
    serves the trained backbone on raw text with the same pooling.

    Args:
        backbone: `AlbertBackbone`.
        num_texts: int, at least 2. Texts per example.
        pooling: one of "mean", "max", "cls", "pooled".

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertBiEncoder(AlbertBackbone("albert_tiny"))
    >>> x = {k: keras.ops.ones((3, 2, 8), "int32") for k in model.input}
    >>> tuple(model(x)["embeddings"].shape)
    (3, 2, 64)
    """

    def __init__(self, backbone, num_texts=2, pooling="mean", **kwargs):
        if not is_positive_int(num_texts) or num_texts < 2:
            raise ValueError(
                "`num_texts` must be an integer of at least 2: an anchor and "
                "its positive (then hard negatives), the size of the inputs' "
                f"text axis [batch, texts, length]. Received: num_texts={num_texts!r}"
            )
        check_pooling(pooling)
        check_backbone(type(self), backbone)
        num_texts = int(num_texts)
        # === Layers ===
        self.backbone = backbone
        # === Functional model ===
        inputs = {
            name: keras.Input((num_texts, None), dtype="int32", name=name)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        merge = _MergeChoices(name="merge_texts")
        flat = {name: merge(tensor) for name, tensor in inputs.items()}
        vectors = normalized(pool(backbone(flat), flat["padding_mask"], pooling))
        dim = backbone.config.hidden_size
        embeddings = keras.ops.reshape(vectors, (-1, num_texts, dim))
        super().__init__(inputs=inputs, outputs={"embeddings": embeddings}, **kwargs)
        # === Config ===
        self.num_texts = num_texts
        self.pooling = pooling

    def _task_config(self):
        return {"num_texts": self.num_texts, "pooling": self.pooling}
