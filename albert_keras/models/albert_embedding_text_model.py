"""`AlbertEmbeddingTextModel`: texts in, one vector per text out."""

from __future__ import annotations

import keras
import numpy as np

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_text_model import AlbertTextModel
from albert_keras.models.embedding_pooling import check_pooling, normalized, pool


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertEmbeddingTextModel(AlbertTextModel):
    """Sentence embeddings: raw texts in, one fixed-size vector each out.

    The texts are tokenized and packed as `AlbertTextModel` does
    (`[CLS] text [SEP]`, or `[CLS] a [SEP] b [SEP]` for pairs), run through
    the backbone, and its outputs pooled into one float32 vector of the
    hidden size per text, for semantic search, clustering or features of
    another model:

    - "mean": the average of the final hidden states over the text's pieces
      and its `[CLS]`/`[SEP]` (the padding left out), as the mean pooling
      of sentence-transformers computes it;
    - "max": their element-wise maximum (padding left out);
    - "cls": the final hidden state of `[CLS]`;
    - "pooled": the official pooler's output (tanh dense on `[CLS]`; what
      transformers' `AlbertModel` returns as `pooler_output`).

    With `normalize`, each vector has unit L2 norm, so a dot product is the
    cosine similarity. Padding never changes a text's vector: a text
    embedded alone or beside longer ones gives the same numbers.

    - `model.embed(texts)`: a NumPy array [texts, hidden size].
    - `model.predict(texts)` / `model(tf.constant(texts))`:
      `{"embeddings": [batch, hidden size]}`.
    - `model.export(path)`: a SavedModel whose `serve(texts)` and
      `serve_pairs(text_a, text_b)` take `tf.string` [batch]; it runs with
      TensorFlow and `import tensorflow_text`, without albert_keras.

    Args:
        task_model: an `AlbertBackbone`, or a task model holding one (a
            fine-tuned `AlbertClassifier`: its encoder, the head unused).
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: int. Packed length; pieces past it are cut.
        pooling: one of "mean", "max", "cls", "pooled".
        normalize: bool. Scale each vector to unit L2 norm.
        **kwargs: `dynamic_length` (pad each batch to its longest text
            only: faster on short texts, the same vectors), `serving_rows`,
            `name`.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> model = AlbertEmbeddingTextModel(
    ...     AlbertBackbone(config), AlbertTokenizer(SPM_MODEL_PATH), 32,
    ...     normalize=True)
    >>> vectors = model.embed(["Emma was handsome.", "It rained all day."])
    >>> vectors.shape, round(float((vectors[0] ** 2).sum()), 4)
    ((2, 64), 1.0)
    """

    def __init__(
        self,
        task_model,
        tokenizer,
        sequence_length=128,
        pooling="mean",
        normalize=False,
        **kwargs,
    ):
        check_pooling(pooling)
        super().__init__(_backbone_of(task_model), tokenizer, sequence_length, **kwargs)
        self.pooling = pooling
        self.normalize = bool(normalize)

    @property
    def backbone(self):
        """The `AlbertBackbone` whose outputs are pooled."""
        return self.task_model

    def call(self, inputs, training=False):
        packed = self.pack(inputs)
        outputs = self.task_model(packed, training=training)
        vectors = pool(outputs, packed["padding_mask"], self.pooling)
        if self.normalize:
            vectors = normalized(vectors)
        return {"embeddings": vectors}

    def embed(self, texts, batch_size=32):
        """The vectors of `texts` as a float32 NumPy array [texts, hidden size].

        Args:
            texts: a str, or a list of str (or a dict / 2-tuple of two lists:
                pairs).
            batch_size: texts run at once.
        """
        if isinstance(texts, (list, tuple)) and not texts:
            return np.zeros((0, self.backbone.config.hidden_size), "float32")
        out = self.predict(texts, batch_size=batch_size, verbose=0)
        return np.asarray(out["embeddings"], "float32")

    def get_config(self):
        return {
            **super().get_config(),
            "pooling": self.pooling,
            "normalize": self.normalize,
        }


def _backbone_of(model):
    """`model` if a backbone, else the backbone a task model holds."""
    backbone = model
    if not isinstance(model, AlbertBackbone):
        backbone = getattr(model, "backbone", None)
    if not isinstance(backbone, AlbertBackbone):
        raise ValueError(
            "AlbertEmbeddingTextModel needs an AlbertBackbone or a task model "
            "holding one (e.g. AlbertBackbone.from_preset(...), a fine-tuned "
            f"AlbertClassifier). Received: {type(model).__name__}"
        )
    return backbone
