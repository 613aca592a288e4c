"""`AlbertTextModel`: a task model that takes raw text (tokenizer + packer inside)."""

from __future__ import annotations

import os

import keras
import numpy as np
import tensorflow as tf

from albert_keras.models.text_model_checks import (
    check_backend,
    check_fit,
    check_strings,
)
from albert_keras.models.traced_endpoint import add_traced_endpoint
from albert_keras.tokenizers.albert_packer import AlbertPacker


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTextModel(keras.Model):
    """Raw strings in, the task model's outputs out.

    Tokenizes (`AlbertTokenizer` or `AlbertWordPieceTokenizer`, the official
    rules), packs as the official `run_classifier` (`AlbertPacker`), and runs
    the task model (any model taking `token_ids`, `segment_ids`,
    `padding_mask`: `AlbertClassifier`, `AlbertSpanQA`, a backbone).

    - `model.predict(["a sentence", ...])` or `model(tf.constant([...]))`:
      single texts; `model({"text_a": [...], "text_b": [...]})` or
      `model((a, b))`: pairs (`[CLS] a [SEP] b [SEP]`).
    - `model.export(path)` writes a SavedModel whose signatures take
      `tf.string`: `serve(texts)` and `serve_pairs(text_a, text_b)`. It runs
      with TensorFlow and `import tensorflow_text` (for the tokenizer ops),
      without albert_keras or Python tokenization.
    - `model.save("m.keras")`: the vocabulary travels as an asset.
    - `model.quantize("int8")` quantizes the task model; the text model then
      saves, loads and exports int8.

    Empty strings, texts of any length (cut to `sequence_length`), NULs and
    bytes that are not UTF-8 (dropped) never fail at serving time.

    Args:
        task_model: the Keras model to feed, e.g. `AlbertClassifier`.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`; the
            packer takes its `[CLS]`/`[SEP]` ids.
        sequence_length: int. Packed length (at most the model's
            `max_position_embeddings`).
        dynamic_length: bool. Pad each batch only to its longest row.
        pairs: bool. The task model was trained on pairs: the SavedModel's
            `serving_default` (what TF Serving calls when no signature is
            named) is then `serve_pairs`, not `serve` (single texts).
        serving_rows: int or None. Rows a SavedModel runs at once (see the
            `serving_rows` property; None: its default).

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    >>> model = AlbertTextModel(classifier, AlbertTokenizer(SPM_MODEL_PATH), 64)
    >>> model.predict(["A fine, witty film.", "Dull."], verbose=0)["logits"].shape
    (2, 2)
    """

    def __init__(
        self,
        task_model,
        tokenizer,
        sequence_length=128,
        dynamic_length=False,
        packer=None,
        pairs=False,
        serving_rows=None,
        **kwargs,
    ):
        check_backend()
        super().__init__(**kwargs)
        if packer is None:  # a loaded model passes its own (no vocabulary yet)
            check_fit(task_model, tokenizer, sequence_length)
            packer = AlbertPacker.for_tokenizer(
                tokenizer, sequence_length, dynamic_length=dynamic_length, name="packer"
            )
        self.task_model = task_model
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.dynamic_length = bool(dynamic_length)
        self.pairs = bool(pairs)
        self.packer = packer
        self.serving_rows = serving_rows
        # The task model holds every weight and is built; the rest has none.
        self.built = True

    @staticmethod
    def _as_tensors(inputs):
        """Python strings, lists and dicts of them as string tensors."""

        def convert(value):
            if isinstance(value, (str, bytes, list)) or (
                isinstance(value, tuple) and value and isinstance(value[0], str)
            ):
                check_strings(value)
                return tf.constant(value, tf.string)
            if isinstance(value, np.ndarray) and value.dtype.kind in "USO":
                if value.dtype.kind == "O":
                    check_strings(value.tolist())
                return tf.constant(value.astype(object), tf.string)
            return value

        if isinstance(inputs, dict):
            return {key: convert(value) for key, value in inputs.items()}
        if isinstance(inputs, tuple) and len(inputs) == 2:
            if not isinstance(inputs[0], (str, bytes)):
                return tuple(convert(value) for value in inputs)
        return convert(inputs)

    def __call__(self, inputs, *args, **kwargs):
        return super().__call__(self._as_tensors(inputs), *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        """`keras.Model.predict` that also takes lists of strings.

        Pairs go as a dict `{"text_a": [...], "text_b": [...]}` (a tuple would
        be read as (x, y) by Keras). A single string is a batch of one, as in
        the call. An empty batch gives empty outputs; inputs of different
        batch sizes are refused by name.
        """
        x = keras.tree.map_structure(_one_text_as_batch, self._as_tensors(x))
        named = x.items() if isinstance(x, dict) else enumerate(keras.tree.flatten(x))
        sizes = {key: t.shape[0] for key, t in named if _is_batch(t)}
        if len(set(sizes.values())) > 1:
            received = ", ".join(f"{key}: {size}" for key, size in sizes.items())
            raise ValueError(
                "The inputs must hold as many texts each (text_a and text_b, "
                "context and options, question and context): they are paired "
                f"row by row. Received: {received}."
            )
        if 0 in sizes.values():  # Keras' predict fails on no batch at all
            return keras.tree.map_structure(np.asarray, self(x))
        return super().predict(x, *args, **kwargs)

    @staticmethod
    def _two_inputs(inputs, first, second, what):
        """`(a, b)` from `{first: a, second: b}` or a 2-tuple; errors name both."""
        if isinstance(inputs, dict):
            missing = {first, second} - set(inputs)
            if missing:
                raise ValueError(
                    f"{what} takes {{'{first}': ..., '{second}': ...}}. Missing: "
                    f"{sorted(missing)}"
                )
            return inputs[first], inputs[second]
        if isinstance(inputs, (tuple, list)) and len(inputs) == 2:
            return tuple(inputs)
        raise ValueError(
            f"{what} takes ({first}, {second}) or {{'{first}': ..., "
            f"'{second}': ...}}. Received: {type(inputs).__name__}"
        )

    def pack(self, inputs):
        """The task model's inputs (dict of int32 [batch, length]) for texts."""
        if isinstance(inputs, dict):
            inputs = self._two_inputs(inputs, "text_a", "text_b", "A text model")
        if isinstance(inputs, (tuple, list)) and len(inputs) == 2:
            if not isinstance(inputs[0], (str, bytes)):
                a, b = (tf.reshape(tf.convert_to_tensor(t), [-1]) for t in inputs)
                return self.packer(self.tokenizer(a), self.tokenizer(b))
        texts = tf.reshape(tf.convert_to_tensor(inputs, tf.string), [-1])
        return self.packer(self.tokenizer(texts))

    def call(self, inputs, training=False):
        return self.task_model(self.pack(inputs), training=training)

    def export(
        self,
        filepath,
        format="tf_saved_model",
        verbose=True,
        input_signature=None,
        **kwargs,
    ):
        """Writes a SavedModel with `serve(texts)` and `serve_pairs(a, b)`.

        Both take string tensors [batch] and return the task model's outputs.

        Args:
            filepath: folder to write.
            format: only "tf_saved_model" (strings are TensorFlow's).
            verbose: print where it went.
            input_signature: not used: the signatures are fixed.
        """
        if format != "tf_saved_model":
            raise ValueError(
                "A text model exports only as a TensorFlow SavedModel (its "
                f"tokenizer is TensorFlow ops). Received: format={format!r}"
            )
        archive = keras.export.ExportArchive()
        archive.track(self)
        self._add_endpoints(archive)
        archive.write_out(filepath, verbose=verbose)

    def _add_endpoints(self, archive):
        """The SavedModel's signatures (a subclass serves other inputs); the
        first one added is also `serving_default`."""
        spec = tf.TensorSpec([None], tf.string)
        endpoints = [
            self._texts_endpoint(),
            (
                "serve_pairs",
                lambda text_a, text_b: self._in_rows(
                    lambda a, b: self((a, b), training=False), text_a, text_b
                ),
                [spec, spec],
            ),
        ]
        for name, function, signature in endpoints[:: -1 if self.pairs else 1]:
            add_traced_endpoint(archive, name, function, signature)

    def _texts_endpoint(self):
        """`("serve", function, signature)`: the model on a batch of single
        texts, `serving_rows` rows at a time."""
        return (
            "serve",
            lambda texts: self._in_rows(lambda t: self(t, training=False), texts),
            [tf.TensorSpec([None], tf.string)],
        )

    _serving_rows = None

    @property
    def serving_rows(self):
        """Rows of a served batch that go through the model at once (see
        `in_chunks`): a request's memory is that of this many rows. Set it
        before `export`; None is the default. `.keras` files keep it."""
        return self._serving_rows or self._default_serving_rows()

    @serving_rows.setter
    def serving_rows(self, rows):
        if rows is not None and (
            not isinstance(rows, int) or isinstance(rows, bool) or rows < 1
        ):
            raise ValueError(
                "`serving_rows` must be a positive integer: the rows of a served "
                "batch that go through the model at once (e.g. `model.serving_rows"
                " = 8`; None for the default). Received: "
                f"serving_rows={rows!r}"
            )
        self._serving_rows = rows

    def _default_serving_rows(self):
        return 64

    def _in_rows(self, call, *inputs):
        """`call(*inputs)` on string tensors, `serving_rows` rows at a time:
        a signature's memory stays bounded whatever the batch size. With
        `dynamic_length` each slice pads to its own longest row; outputs of
        that width (a backbone's `sequence_output`) do not stack, so such a
        model serves the whole batch at once (see `in_chunks`)."""
        from albert_keras.models.chunked_serving import in_chunks

        return in_chunks(call, inputs, self.serving_rows)

    def quantize(self, mode=None, **kwargs):
        """`task_model.quantize(mode, ...)`: the tokenizer has nothing to quantize.

        (Keras's own walk would also visit the tokenizer and packer, and fail
        on them before their first call.) The text model saves, loads and
        exports quantized.
        """
        self.task_model.quantize(mode, **kwargs)
        self.predict_function = None

    def export_serving(self, path):
        """Same as `export(path, verbose=False)`."""
        self.export(path, verbose=False)

    def build_from_config(self, config):
        pass  # built at construction (see __init__)

    def get_config(self):
        rows = self.serving_rows  # saved only when set to another than the default
        return {
            **super().get_config(),
            "task_model": keras.saving.serialize_keras_object(self.task_model),
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "sequence_length": self.sequence_length,
            "dynamic_length": self.dynamic_length,
            "packer": keras.saving.serialize_keras_object(self.packer),
            **({"pairs": True} if self.pairs else {}),
            **({"serving_rows": rows} if rows != self._default_serving_rows() else {}),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("task_model", "tokenizer", "packer"):
            config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)


def with_tokenizer(task_model, tokenizer, sequence_length=128, **kwargs):
    """`AlbertTextModel(task_model, tokenizer, sequence_length)`: text in.

    An `AlbertMultipleChoice` gets an `AlbertChoiceTextModel` (a context and
    its options in), an `AlbertSquadV2` or `AlbertSpanQA` an
    `AlbertSpanTextModel` (questions and contexts in, answers out), an
    `AlbertTokenClassifier` an `AlbertTaggerTextModel` (sentences in, a tag
    per word out), an `AlbertPretrainer` an `AlbertFillMaskTextModel` (texts
    with `[MASK]` in, the likeliest pieces for each mask out). With
    `pooling`, any model holding a backbone gets an `AlbertEmbeddingTextModel`
    (texts in, one vector each out); an `AlbertBiEncoder` gets one by
    default, with its own pooling, normalized.

    Args:
        task_model: a model taking `token_ids`, `segment_ids`, `padding_mask`.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`, or the
            path of a SentencePiece `.model` or WordPiece `vocab.txt`
            (`load_tokenizer` reads it, lowercasing as the releases do).
        sequence_length: packed length.
        **kwargs: `dynamic_length`, `name`; for embeddings `pooling`,
            `normalize`; for tagging `tags`; for fill-mask
            `top_k`, `max_masks`; for QA `doc_stride`,
            `max_query_length`, `max_answer_length`, `n_best_size`,
            `null_threshold`, `null_score`.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> classifier = AlbertClassifier(AlbertBackbone(config), num_classes=3)
    >>> model = with_tokenizer(classifier, AlbertTokenizer(SPM_MODEL_PATH), 64)
    >>> model({"text_a": ["It rains."], "text_b": ["It is wet."]})["logits"].shape
    TensorShape([1, 3])
    """
    from albert_keras.models.albert_bi_encoder import AlbertBiEncoder
    from albert_keras.models.albert_choice_text_model import AlbertChoiceTextModel
    from albert_keras.models.albert_embedding_text_model import (
        AlbertEmbeddingTextModel,
    )
    from albert_keras.models.albert_fill_mask_text_model import AlbertFillMaskTextModel
    from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
    from albert_keras.models.albert_pretrainer import AlbertPretrainer
    from albert_keras.models.albert_span_qa import AlbertSpanQA
    from albert_keras.models.albert_span_text_model import AlbertSpanTextModel
    from albert_keras.models.albert_squad_v2 import AlbertSquadV2
    from albert_keras.models.albert_tagger_text_model import AlbertTaggerTextModel
    from albert_keras.models.albert_token_classifier import AlbertTokenClassifier

    if isinstance(tokenizer, (str, os.PathLike)):
        from albert_keras.tokenizers.vocabulary_files import load_tokenizer

        tokenizer = load_tokenizer(tokenizer)
    if isinstance(task_model, AlbertBiEncoder):  # its vectors as trained
        kwargs = {"pooling": task_model.pooling, "normalize": True, **kwargs}
    if "pooling" in kwargs or "normalize" in kwargs:
        text_model = AlbertEmbeddingTextModel
    elif isinstance(task_model, AlbertPretrainer):
        text_model = AlbertFillMaskTextModel
    elif isinstance(task_model, (AlbertSpanQA, AlbertSquadV2)):
        text_model = AlbertSpanTextModel
    elif isinstance(task_model, AlbertTokenClassifier):
        text_model = AlbertTaggerTextModel
    elif isinstance(task_model, AlbertMultipleChoice):
        text_model = AlbertChoiceTextModel
    else:
        text_model = AlbertTextModel
    return text_model(task_model, tokenizer, sequence_length, **kwargs)


def _one_text_as_batch(value):
    """A single string as a batch of one, as the call takes it (Keras' predict
    needs a batch axis)."""
    if isinstance(value, tf.Tensor) and value.shape.rank == 0:
        return tf.reshape(value, [1])
    return value


def _is_batch(value):
    """Whether `value` is an array or tensor of texts (not a tf.data.Dataset)."""
    return len(getattr(value, "shape", ())) > 0
