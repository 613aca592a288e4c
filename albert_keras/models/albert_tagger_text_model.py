"""`AlbertTaggerTextModel`: a token classifier on raw sentences, a tag per word."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.models.albert_text_model import AlbertTextModel
from albert_keras.models.albert_token_classifier import AlbertTokenClassifier
from albert_keras.models.traced_endpoint import add_traced_endpoint
from albert_keras.tokenizers.word_pieces import packed_positions, word_pieces


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTaggerTextModel(AlbertTextModel):
    """Sentences as strings in, their words and a tag per word out.

    A sentence's words are what whitespace separates. Each word is
    tokenized and tagged on the piece `word_pieces` chooses, exactly as
    `TokenClassificationTask` trains, and the `AlbertTokenClassifier`'s
    logits there give the tag.

    - `model.predict(["Ann met Bob in Paris .", ...])` or
      `model(tf.constant([...]))`.
    - `model.export(path)`: a SavedModel whose signature `serve(texts)`
      takes `tf.string` [batch]. It runs with TensorFlow and `import
      tensorflow_text`, without albert_keras.

    Outputs, [batch, sequence_length - 2] (the most words a row can tag),
    padded past each sentence's words: `words` (strings, ""), `tags`
    (strings; "" for padding and for words past `sequence_length` pieces),
    `tag_ids` (int32, -1 there), `scores` (the tag's probability, 0 there),
    `logits` [batch, words, tags] (0 there).

    Args:
        task_model: `AlbertTokenClassifier`.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: int. Packed length.
        tags: the tag names in class order; default "0", "1", ...

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig, AlbertTokenClassifier
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> tagger = AlbertTokenClassifier(AlbertBackbone(config), num_classes=3)
    >>> model = AlbertTaggerTextModel(
    ...     tagger, AlbertTokenizer(SPM_MODEL_PATH), 16, tags=["O", "B-PER", "I-PER"])
    >>> out = model.predict(["Mr. Darcy smiled"], verbose=0)
    >>> out["words"][0, :4].tolist(), out["tags"].shape
    ([b'Mr.', b'Darcy', b'smiled', b''], (1, 14))
    """

    def __init__(self, task_model, tokenizer, sequence_length=128, tags=None, **kwargs):
        if not isinstance(task_model, AlbertTokenClassifier):
            raise ValueError(
                "AlbertTaggerTextModel feeds an AlbertTokenClassifier; for "
                "classifiers use AlbertTextModel. Received: "
                f"{type(task_model).__name__}"
            )
        num_classes = task_model.num_classes
        tags = [str(t) for t in tags] if tags else [str(i) for i in range(num_classes)]
        if len(tags) != num_classes:
            raise ValueError(
                f"`tags` names {len(tags)} tags but the model has "
                f"num_classes={num_classes}: give one name per class, in order."
            )
        super().__init__(task_model, tokenizer, sequence_length, **kwargs)
        self.tags = tags

    def _split(self, inputs):
        """(words, pieces, positions) of a batch of sentences (`word_pieces`)."""
        texts = tf.reshape(tf.convert_to_tensor(inputs, tf.string), [-1])
        words = tf.strings.split(texts)
        return (words, *word_pieces(self.tokenizer, words))

    def call(self, inputs, training=False):
        words, pieces, positions = self._split(inputs)
        logits = self.task_model(self.packer(pieces), training=training)["logits"]
        width = self.sequence_length - 2
        where = packed_positions(positions, self.sequence_length)
        where = where.to_tensor(-1, shape=[None, width])
        found = where >= 0
        picked = tf.gather(logits, tf.maximum(where, 0), batch_dims=1)
        picked = tf.where(found[..., None], picked, tf.zeros_like(picked))
        ids = tf.where(found, tf.argmax(picked, -1, output_type=tf.int32), -1)
        names = tf.gather(tf.constant(self.tags), tf.maximum(ids, 0))
        scores = tf.reduce_max(tf.nn.softmax(picked), -1)
        return {
            "words": words.to_tensor("", shape=[None, width]),
            "tags": tf.where(found, names, ""),
            "tag_ids": ids,
            "scores": tf.where(found, scores, tf.zeros_like(scores)),
            "logits": picked,
        }

    def pack(self, inputs):
        """The task model's inputs for sentences (their words' pieces)."""
        _, pieces, _ = self._split(inputs)
        return self.packer(pieces)

    def _add_endpoints(self, archive):
        """`serve(texts [batch])` -> words, tags, tag_ids, scores, logits."""
        add_traced_endpoint(archive, *self._texts_endpoint())

    def get_config(self):
        return {**super().get_config(), "tags": self.tags}
