"""`AlbertFillMaskTextModel`: texts with `[MASK]` in, candidates for each mask out."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.models.albert_pretrainer import AlbertPretrainer
from albert_keras.models.albert_text_model import AlbertTextModel
from albert_keras.models.traced_endpoint import add_traced_endpoint
from albert_keras.tokenizers.masked_text import MASK_TOKEN, masked_text_ids

SPIECE_UNDERLINE = "\u2581"


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertFillMaskTextModel(AlbertTextModel):
    """The masked-LM head on raw text: each `[MASK]` filled with its top pieces.

    Write `[MASK]` where a piece is missing ("Emma was [MASK] of it."); one
    mask is one piece, so a word of two pieces needs two. The text is
    tokenized by `masked_text_ids` (the pieces around a mask are those of the
    whole text, as in pretraining), packed `[CLS] text [SEP]`, and the
    `AlbertPretrainer`'s MLM logits at the masks give a softmax over the
    vocabulary, as transformers' fill-mask pipeline scores it.

    - `model.fill_mask(["Emma was [MASK] of it."])`: per text, per mask, the
      candidates as dicts (`token`, `token_id`, `score`, `text`: the text
      with that candidate in place of the mask).
    - `model.predict([...])` / `model(tf.constant([...]))`: the arrays below.
    - `model.export(path)`: a SavedModel whose `serve(texts)` takes
      `tf.string` [batch] and runs with TensorFlow and `import
      tensorflow_text`, without albert_keras.

    Outputs, [batch, max_masks, top_k] (a text's j-th mask in row j):
    `token_ids` (int32; -1 past the text's masks and for masks cut off by
    `sequence_length`), `tokens` (the pieces; ""), `scores` (probabilities;
    0), and `masks` [batch] (int32: the masks written in each text).

    Args:
        task_model: `AlbertPretrainer` (its MLM head; the SOP head is unused).
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: int. Packed length; pieces past it are cut.
        top_k: candidates per mask.
        max_masks: masks filled per text (the official
            `max_predictions_per_seq` is 20); later ones get -1.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> pretrainer = AlbertPretrainer(AlbertBackbone(config))
    >>> model = AlbertFillMaskTextModel(
    ...     pretrainer, AlbertTokenizer(SPM_MODEL_PATH), 32, top_k=3)
    >>> out = model.predict(["Emma was [MASK] of it."], verbose=0)
    >>> out["token_ids"].shape, out["masks"].tolist()
    ((1, 20, 3), [1])
    >>> len(model.fill_mask("Emma was [MASK] of it.")[0][0])  # text, mask
    3
    """

    def __init__(
        self,
        task_model,
        tokenizer,
        sequence_length=128,
        top_k=5,
        max_masks=20,
        **kwargs,
    ):
        if not isinstance(task_model, AlbertPretrainer):
            raise ValueError(
                "AlbertFillMaskTextModel needs an AlbertPretrainer (the masked-LM "
                "head): load one with AlbertPretrainer.from_preset(...) or "
                "load_official_checkpoint(..., model='pretrainer'). Received: "
                f"{type(task_model).__name__}"
            )
        super().__init__(task_model, tokenizer, sequence_length, **kwargs)
        vocabulary = task_model.backbone.config.vocab_size
        for name, value, most in (
            ("top_k", top_k, vocabulary),
            ("max_masks", max_masks, None),
        ):
            if (
                not isinstance(value, int)
                or isinstance(value, bool)
                or value < 1
                or (most is not None and value > most)
            ):
                limit = f" and at most the vocabulary size {most}" if most else ""
                raise ValueError(
                    f"`{name}` must be a positive integer{limit}. Received: "
                    f"{name}={value!r}"
                )
        self.top_k = top_k
        self.max_masks = max_masks

    def pack(self, inputs):
        """The pretrainer's inputs for texts (`mask_positions` [batch, max_masks]),
        and the masks written in each text."""
        texts = tf.reshape(tf.convert_to_tensor(inputs, tf.string), [-1])
        ids = masked_text_ids(self.tokenizer, texts)
        mask_id = self.tokenizer.token_to_id(MASK_TOKEN)
        masks = tf.reduce_sum(tf.cast(ids == mask_id, tf.int32), axis=1)
        packed = self.packer(ids)
        found = tf.ragged.boolean_mask(
            tf.ragged.range(
                tf.fill([tf.shape(texts)[0]], tf.shape(packed["token_ids"])[1])
            ),
            packed["token_ids"] == mask_id,
        )
        positions = found.to_tensor(-1, shape=[None, self.max_masks])
        return {**packed, "mask_positions": positions}, masks

    def call(self, inputs, training=False):
        packed, masks = self.pack(inputs)
        found = packed["mask_positions"] >= 0
        packed["mask_positions"] = tf.maximum(packed["mask_positions"], 0)
        logits = self.task_model(packed, training=training)["mlm_logits"]
        scores, ids = tf.math.top_k(
            tf.nn.softmax(tf.cast(logits, tf.float32)), self.top_k
        )
        found = found[..., None]  # tf.where broadcasts it over the top k
        return {
            "token_ids": tf.where(found, ids, -1),
            "tokens": tf.where(found, self.tokenizer.tokens_of(ids), ""),
            "scores": tf.where(found, scores, tf.zeros_like(scores)),
            "masks": masks,
        }

    def fill_mask(self, texts):
        """The candidates of every mask, as Python objects.

        Args:
            texts: a str, or a list of str.

        Returns:
            per text, per mask written in it, a list of `top_k` dicts:
            `token` (the piece), `token_id`, `score` (its probability) and
            `text` (the text with the piece in place of that mask). A mask
            the model did not see (past `sequence_length` or `max_masks`)
            has an empty list.
        """
        texts = [texts] if isinstance(texts, (str, bytes)) else list(texts)
        texts = [t.decode("utf-8") if isinstance(t, bytes) else t for t in texts]
        out = self.predict(texts, verbose=0) if texts else {}
        return [_candidates(text, out, row) for row, text in enumerate(texts)]

    def _add_endpoints(self, archive):
        """`serve(texts [batch])` -> token_ids, tokens, scores, masks."""
        add_traced_endpoint(archive, *self._texts_endpoint())

    def get_config(self):
        return {
            **super().get_config(),
            "top_k": self.top_k,
            "max_masks": self.max_masks,
        }


def _candidates(text, out, row):
    """The dicts of `fill_mask` for one text (row `row` of the outputs)."""
    result = []
    for mask in range(int(out["masks"][row])):
        if mask >= out["token_ids"].shape[1] or out["token_ids"][row, mask, 0] < 0:
            result.append([])
            continue
        result.append(
            [
                {
                    "token": out["tokens"][row, mask, k].decode("utf-8"),
                    "token_id": int(out["token_ids"][row, mask, k]),
                    "score": float(out["scores"][row, mask, k]),
                    "text": filled_text(
                        text, mask, out["tokens"][row, mask, k].decode("utf-8")
                    ),
                }
                for k in range(out["token_ids"].shape[2])
            ]
        )
    return result


def filled_text(text, mask, token):
    """`text` with its `mask`-th `[MASK]` replaced by the piece `token`.

    A SentencePiece word start ("▁lady") is the word, after a space where the
    mask follows a character; any other piece is glued on ("##" dropped).

    Example:
    >>> filled_text("Emma is a [MASK]. [MASK]!", 0, "\u2581lady")
    'Emma is a lady. [MASK]!'
    >>> filled_text("talk[MASK] much", 0, "ing")
    'talking much'
    """
    parts = text.split(MASK_TOKEN)
    before, after = (
        MASK_TOKEN.join(parts[: mask + 1]),
        MASK_TOKEN.join(parts[mask + 1 :]),
    )
    word = token
    if token.startswith(SPIECE_UNDERLINE):
        word = token[1:]
        if before and not before[-1].isspace():
            word = " " + word
    elif token.startswith("##"):
        word = token[2:]
    return before + word + after
