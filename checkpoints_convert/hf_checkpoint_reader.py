"""`HFCheckpointReader`: a Hugging Face transformers ALBERT folder, read as official."""

from __future__ import annotations

import json
import os

import numpy as np

from checkpoints_convert.checkpoint_reader import CheckpointReader
from checkpoints_convert.conversion_error import ConversionError
from checkpoints_convert.hf_names import (
    HF_BUFFERS,
    HF_TIED,
    HF_WITHOUT_POOLER,
    TOKEN_HEAD_PREFIX,
    albert_config_dict,
    has_token_head,
    official_name,
)
from checkpoints_convert.name_row import TRANSPOSE
from checkpoints_convert.safetensors_file import SafetensorsFile

HF_CONFIG_FILE = "config.json"
SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
PYTORCH_BIN = "pytorch_model.bin"
# transformers' AlbertTokenizer (SentencePiece) and BertTokenizer (WordPiece,
# as the hub's Chinese ALBERT checkpoints) files.
HF_VOCAB_FILES = ("spiece.model", "vocab.txt")


def is_hf_folder(path) -> bool:
    """A folder with a transformers `config.json` and weights beside it."""
    path = os.fspath(path)
    return os.path.isfile(os.path.join(path, HF_CONFIG_FILE)) and any(
        os.path.isfile(os.path.join(path, f))
        for f in (SAFETENSORS, SAFETENSORS_INDEX, PYTORCH_BIN)
    )


class HFCheckpointReader:
    """A transformers ALBERT checkpoint with the interface of `CheckpointReader`.

    Reads `model.safetensors` (or the shards of `model.safetensors.index.json`;
    `pytorch_model.bin` only where PyTorch is installed) and presents every
    tensor under its official TF1 name and in the official layout (`nn.Linear`
    weights transposed to [in, out]), so `load_official_checkpoint` converts
    it through the one official name table. The config comes from
    `config.json` (`load_config`), the vocabulary from `spiece.model` (or a
    WordPiece `vocab.txt`).

    Keys no weight takes are handled, never dropped silently: the position-ids
    buffer is ignored; the pooler, absent from `AlbertForQuestionAnswering`
    checkpoints, is left initialized (and reported) since no head of theirs
    reads it; the MLM decoder, tied to the word embeddings and the
    output bias, is checked equal to them (or, where saving kept only the
    decoder's name of a tied tensor, taken as them);
    `AlbertForTokenClassification`'s per-token classifier is named
    `token_classifier/...`, so it loads into `AlbertTokenClassifier` only;
    anything else is an error naming the key.

    Args:
        path: the folder (`config.json` and weights), as `save_pretrained`
            writes it.

    Example:
    >>> reader = HFCheckpointReader("albert-base-v2/")  # doctest: +SKIP
    >>> name = "bert/encoder/embedding_hidden_mapping_in/kernel"
    >>> reader.shape(name)  # doctest: +SKIP
    (128, 768)
    """

    def __init__(self, path: str | os.PathLike):
        self.path = self.prefix = os.fspath(path)
        if not is_hf_folder(self.path):
            raise FileNotFoundError(
                f"No transformers checkpoint in {self.path!r}: expected "
                f"{HF_CONFIG_FILE} and {SAFETENSORS} (or {SAFETENSORS_INDEX})."
            )
        self.config_path = os.path.join(self.path, HF_CONFIG_FILE)
        with open(self.config_path, encoding="utf-8") as f:
            try:
                self.hf_config = json.load(f)
            except json.JSONDecodeError as e:
                raise ConversionError(
                    f"{self.config_path!r} is not JSON: {e}"
                ) from None
        if not isinstance(self.hf_config, dict):
            raise ConversionError(f"{self.config_path!r} must hold a JSON object.")
        # transformers' flag for a sigmoid per logit (`AlbertClassifier`'s
        # `multi_label`).
        self.multi_label = (
            self.hf_config.get("problem_type") == "multi_label_classification"
        )
        self.config_values = albert_config_dict(self.hf_config, self.config_path)
        tensors, self.choice = self._open_tensors()
        architectures = self.hf_config.get("architectures") or []
        per_token = has_token_head(architectures)
        # Parts the loader may find absent and leave initialized.
        self.optional_parts = (
            ("pooler",) if set(architectures) & set(HF_WITHOUT_POOLER) else ()
        )
        # official name -> (read function, transform to official, official shape)
        self._stored = {}
        self.foreign_heads = []
        self.ignored_keys = []
        tied = {}
        for key, (read, shape) in tensors.items():
            if key in HF_BUFFERS:
                self.ignored_keys.append(key)
                continue
            if key in HF_TIED:
                tied[key] = (read, tuple(shape))
                continue
            found = official_name(key)
            if found is None:
                raise ConversionError(
                    f"{self.path!r}: {key!r} is not a transformers ALBERT weight "
                    "albert-keras knows (AlbertModel, AlbertForPreTraining, "
                    "AlbertForMaskedLM, AlbertForSequenceClassification, "
                    "AlbertForQuestionAnswering, AlbertForMultipleChoice, "
                    "AlbertForTokenClassification)."
                )
            name, transform = found
            if per_token and name in ("output_weights", "output_bias"):
                name = TOKEN_HEAD_PREFIX + name  # AlbertForTokenClassification
            if name in self._stored:
                raise ConversionError(
                    f"{self.path!r} holds {key!r} twice (with and without the "
                    "`albert.` prefix); cannot tell which to use."
                )
            if transform is TRANSPOSE:
                shape = shape[::-1]
            self._stored[name] = (read, transform, tuple(shape))
        self._check_tied(tied)
        self.vocab_path = next(
            (
                os.path.join(self.path, v)
                for v in HF_VOCAB_FILES
                if os.path.isfile(os.path.join(self.path, v))
            ),
            None,
        )

    def _open_tensors(self):
        """{HF key: (read function, stored shape)}, and which file(s) held them."""
        single = os.path.join(self.path, SAFETENSORS)
        index = os.path.join(self.path, SAFETENSORS_INDEX)
        if os.path.isfile(single):
            files, choice = [single], SAFETENSORS
        elif os.path.isfile(index):
            with open(index, encoding="utf-8") as f:
                weight_map = json.load(f).get("weight_map", {})
            names = sorted(set(weight_map.values()))
            files = [os.path.join(self.path, n) for n in names]
            choice = f"{len(files)} shards of {SAFETENSORS_INDEX}"
        else:
            return _read_pytorch_bin(os.path.join(self.path, PYTORCH_BIN)), PYTORCH_BIN
        tensors = {}
        for path in files:
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"{SAFETENSORS_INDEX} names {os.path.basename(path)!r}, which "
                    f"is not in {self.path!r}."
                )
            st = SafetensorsFile(path)
            for key in st.names:
                tensors[key] = ((lambda k=key, s=st: s.read(k)), st.shape(key))
        return tensors, choice

    def _check_tied(self, tied):
        for key, (read, shape) in tied.items():
            target = official_name(HF_TIED[key])[0]
            if target not in self._stored:
                # Deduplicated on save (safetensors keeps one name of tied
                # tensors): the decoder's copy is the weight itself.
                self._stored[target] = (read, None, shape)
                continue
            value, reference = read(), self.read(target)
            if value.shape != reference.shape or not np.array_equal(value, reference):
                raise ConversionError(
                    f"{self.path!r}: {key!r} differs from {HF_TIED[key]!r}; an "
                    "untied MLM decoder is not an ALBERT checkpoint albert-keras "
                    "can load (the official decoder is the word embedding)."
                )
            self.ignored_keys.append(key)

    def load_config(self):
        """The `AlbertConfig` of `config.json` (fields translated)."""
        from albert_keras.config import AlbertConfig

        return AlbertConfig.from_dict(self.config_values)

    @property
    def names(self) -> list[str]:
        """Official names of the stored tensors."""
        return list(self._stored)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._stored[name][2]

    def read(self, name: str) -> np.ndarray:
        read, transform, _ = self._stored[name]
        value = np.asarray(read(), dtype=np.float32)
        return transform(value) if transform is TRANSPOSE else value

    @staticmethod
    def is_optimizer_state(name: str) -> bool:
        return False

    is_head = staticmethod(CheckpointReader.is_head)


def _read_pytorch_bin(path):
    try:
        import torch
    except ImportError:
        raise ConversionError(
            f"{path!r} is a PyTorch pickle, which needs PyTorch to read: install "
            "torch, or save the model with safetensors (save_pretrained does by "
            "default) and convert model.safetensors."
        ) from None
    state = torch.load(path, map_location="cpu", weights_only=True)
    return {
        key: ((lambda t=tensor: t.float().numpy()), tuple(tensor.shape))
        for key, tensor in state.items()
    }
