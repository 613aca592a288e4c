"""`ModelGardenCheckpointReader`: TF2 Hub SavedModels, Model Garden checkpoints."""

from __future__ import annotations

import glob
import json
import os
import re

import numpy as np
import tensorflow as tf

from albert_keras.tokenizers.vocabulary_files import vocabulary_beside
from checkpoints_convert.checkpoint_reader import (
    CheckpointReader,
    check_data_files,
    config_beside,
    find_prefix,
    open_index,
)
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.model_garden_names import (
    encoder_config,
    heads_of,
    official_name,
    official_shape,
    to_official,
)

OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
# Training state beside the model in a Model Garden checkpoint
# (`tf.train.Checkpoint(global_step=..., model=..., optimizer=...)`).
_STATE_KEYS = ("optimizer/", "global_step/", "save_counter/")
_ENCODER_CLASSES = ("AlbertEncoder", "AlbertTransformerEncoder")


def is_object_based(prefix: str) -> bool:
    """Whether the checkpoint `prefix` is TF2 object-based (it stores the object
    graph), read from its `.index` alone.

    Example:
    >>> is_object_based("no/such/model.ckpt-best")
    False
    """
    try:
        with open(prefix + ".index", "rb") as f:
            return OBJECT_GRAPH.encode() in f.read()
    except OSError:
        return False


def holds_object_based(path) -> bool:
    """Whether `path` (a folder or prefix) is a TF2 object-based checkpoint: a
    SavedModel's `variables/`, or a folder whose every `*.index` is one.

    Example:
    >>> holds_object_based("no/such/folder")
    False
    """
    path = os.fspath(path)
    if not os.path.isdir(path):
        return is_object_based(re.sub(r"(\.index|\.data-\d+-of-\d+)$", "", path))
    variables = os.path.join(path, "variables", "variables")
    if os.path.isfile(variables + ".index"):
        return is_object_based(variables)
    indexes = glob.glob(os.path.join(glob.escape(path), "*.index"))
    return bool(indexes) and all(is_object_based(i[: -len(".index")]) for i in indexes)


class ModelGardenCheckpointReader:
    """A TF2 ALBERT of TensorFlow Model Garden with the interface of `CheckpointReader`.

    Reads a TF2 Hub SavedModel folder (`tensorflow/albert_en_*`: `saved_model.pb`,
    `variables/`, the SentencePiece model in `assets/`) or an object-based
    `tf.train.Checkpoint` of Model Garden's `AlbertEncoder` (a training folder
    of `official/nlp`, or the output of its TF1 -> TF2 converter). The
    checkpoint's object graph gives each value's variable name, and every
    encoder and masked-LM variable is presented under its official name and
    layout (`model_garden_names`: the 3-D attention kernels reshaped), so
    `load_official_checkpoint` converts it through the one official table.
    Optimizer state and the step counters are ignored (and reported); other
    heads (a Model Garden classifier, say) are reported as skipped.

    The config comes from an `albert_config.json` beside (or in `assets/`),
    else from the encoder's Keras config saved in the SavedModel; a bare
    checkpoint without either needs `config=`. The head count shown by the
    3-D kernels is checked against the config.

    Args:
        path: the SavedModel folder, a checkpoint folder or prefix.

    Example:
    >>> reader = ModelGardenCheckpointReader("albert_en_base_3/")  # doctest: +SKIP
    >>> reader.shape("bert/pooler/dense/kernel")  # doctest: +SKIP
    (768, 768)
    """

    optional_parts: tuple[str, ...] = ()
    is_head = staticmethod(CheckpointReader.is_head)

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.prefix, self.folder, self.choice = find_prefix(self.path)
        if self.choice == "TF1 Hub module":
            self.choice = "SavedModel variables"
        parent = os.path.dirname(self.folder)
        if os.path.basename(self.folder) == "variables" and os.path.isfile(
            os.path.join(parent, "saved_model.pb")
        ):
            self.folder = parent  # the prefix variables/variables was given
        _, self._reader = open_index(self.prefix)
        self.data_files = check_data_files(self.prefix, self._reader)
        self._stored, self.ignored_keys, self.foreign_heads = {}, [], []
        self.heads = None
        self._shapes = self._reader.get_variable_to_shape_map()
        variables = list(_variables(self._reader, self.prefix))
        _check_albert(self.path, self.prefix, [name for _, name in variables])
        for key, full_name in variables:
            self._add(key, full_name)
        self.config_path = config_beside(self.folder)
        self._saved_model = next(
            (
                os.path.join(self.folder, f)
                for f in ("keras_metadata.pb", "saved_model.pb")
                if os.path.isfile(os.path.join(self.folder, f))
            ),
            None,
        )
        self.config_path = self.config_path or self._saved_model
        self.vocab_path = vocabulary_beside(os.path.join(self.folder, "assets"))
        self.vocab_path = self.vocab_path or vocabulary_beside(self.folder)

    def _add(self, key, full_name):
        if key.startswith(_STATE_KEYS) or ".OPTIMIZER_SLOT" in key:
            self.ignored_keys.append(full_name or key)
            return
        official = official_name(full_name)
        if official is None:
            self.foreign_heads.append(full_name or key)
            return
        if official in self._stored:
            raise ConversionError(
                f"{self.prefix!r} holds two variables for {official!r} "
                f"({self._stored[official][0]!r} and {full_name!r}): more than "
                "one encoder, cannot tell which to use."
            )
        shape = tuple(self._shapes[key])
        heads = heads_of(official, shape)
        if heads is not None:
            self.heads = heads
        self._stored[official] = (full_name, key, official_shape(official, shape))

    def load_config(self):
        """The `AlbertConfig`: `albert_config.json`, else the SavedModel's own."""
        from albert_keras.config import AlbertConfig

        if self.config_path is None:
            raise FileNotFoundError(
                f"No albert_config.json beside {self.prefix!r} and no SavedModel "
                "to read the encoder's config from: pass the config, "
                "config='albert_config.json' (albert-convert --config), with "
                "the encoder's sizes (Model Garden's params.yaml: "
                "task.model.encoder.albert)."
            )
        if self.config_path != self._saved_model:
            config = AlbertConfig.from_json_file(self.config_path)
        else:
            values = encoder_config(_saved_encoder(self.folder), self.config_path)
            config = AlbertConfig.from_dict(values)
        self.check_heads(config)
        return config

    def check_heads(self, config):
        """Refuses a config whose head count the 3-D kernels contradict."""
        if self.heads is not None and self.heads != config.num_attention_heads:
            raise ConversionError(
                f"{self.prefix!r} has {self.heads} attention heads (its kernels "
                f"are [hidden, heads, size]), the config {config.num_attention_heads}: "
                f"pass a config with num_attention_heads={self.heads}."
            )

    @property
    def names(self) -> list[str]:
        """Official names of the stored tensors."""
        return list(self._stored)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._stored[name][2]

    def read(self, name: str) -> np.ndarray:
        full_name, key, _ = self._stored[name]
        try:
            value = self._reader.get_tensor(key)
        except (tf.errors.OpError, ValueError, IndexError) as e:
            raise ConversionError(
                f"Cannot read {full_name!r} from {self.prefix!r}: "
                f"{str(e).splitlines()[0] if str(e) else type(e).__name__}. The "
                "file is truncated or corrupt; copy or download it again."
            ) from None
        return to_official(name, np.asarray(value, dtype=np.float32))

    @staticmethod
    def is_optimizer_state(name: str) -> bool:
        return False


def _check_albert(path, prefix, full_names):
    """Refuses what is no Model Garden ALBERT encoder: albert-keras's own
    exports, and other TF2 models (BERT shares the embedding names)."""
    if any(
        re.search(r"(^|/)encoder/group_\d+_inner_group_\d+/", n) for n in full_names
    ):
        raise ConversionError(
            f"{path!r} is a SavedModel that albert-keras exported (model.export, "
            "--saved-model): it serves the model and is not read back. Convert "
            "the .keras file it was exported from."
        )
    query = official_name("transformer/self_attention/query/kernel")
    if not any(official_name(n) == query for n in full_names):
        example = next((n for n in full_names if n), "none")
        raise ConversionError(
            f"{prefix!r} is a TF2 object-based checkpoint, but not of a Model "
            "Garden ALBERT encoder: it has no shared transformer/self_attention/"
            f"query/kernel (its variables are named like {example!r}). "
            "albert-keras reads ALBERT only."
        )


def _variables(reader, prefix):
    """(checkpoint key, variable full name) of every saved variable."""
    from google.protobuf.message import DecodeError
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        graph.ParseFromString(reader.get_tensor(OBJECT_GRAPH))
    except (DecodeError, tf.errors.OpError) as e:
        raise ConversionError(
            f"Cannot read the object graph of {prefix!r} ({e}): the checkpoint "
            "is corrupt; copy or download it again."
        ) from None
    for node in graph.nodes:
        for attribute in node.attributes:
            if attribute.name == "VARIABLE_VALUE":
                yield attribute.checkpoint_key, attribute.full_name


def _saved_encoder(folder) -> dict:
    """The `AlbertEncoder`'s Keras config saved with a SavedModel."""
    for _, text in _keras_metadata(folder):
        try:
            value = json.loads(text)
        except ValueError:
            continue
        name = value.get("class_name", "") if isinstance(value, dict) else ""
        if name.split(">")[-1] in _ENCODER_CLASSES:
            return value.get("config") or {}
    raise ConversionError(
        f"{folder!r}: no albert_config.json and no AlbertEncoder config in its "
        "SavedModel (keras_metadata.pb, saved_model.pb): pass the model's "
        "albert_config.json as config=."
    )


def _keras_metadata(folder):
    """(file, JSON text) of each Keras object's metadata in a SavedModel:
    `keras_metadata.pb` (TF 2.5 and later), else `saved_model.pb`'s own."""
    path = os.path.join(folder, "keras_metadata.pb")
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
        # SavedMetadata: nodes = 1 (SavedObject: metadata = 5).
        for node in _fields(data, 1):
            for text in _fields(node, 5):
                yield path, text.decode("utf-8", "replace")
    path = os.path.join(folder, "saved_model.pb")
    if os.path.isfile(path):
        from tensorflow.core.protobuf import saved_model_pb2

        model = saved_model_pb2.SavedModel()
        with open(path, "rb") as f:
            model.ParseFromString(f.read())
        for graph in model.meta_graphs:
            for node in graph.object_graph_def.nodes:
                if node.WhichOneof("kind") == "user_object":
                    yield path, node.user_object.metadata


def _fields(data: bytes, number: int):
    """The bytes of each length-delimited field `number` of a protobuf message."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        kind = key & 7
        if kind == 0:
            _, position = _varint(data, position)
        elif kind in (1, 5):
            position += 8 if kind == 1 else 4
        elif kind == 2:
            length, position = _varint(data, position)
            if key >> 3 == number:
                yield data[position : position + length]
            position += length
        else:
            return  # groups: not in these messages


def _varint(data, position):
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position
