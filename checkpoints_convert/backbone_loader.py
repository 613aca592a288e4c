"""`load_backbone` and `find_vocabulary`: a backbone and its vocabulary from any source.

What fine-tuning (`albert_keras.tasks`) and continued pretraining start from:
a preset name (random weights), a `.keras` file of ours (`AlbertBackbone` or
any task model, e.g. `pretrainer.keras`), an official google-research
checkpoint (release folder, prefix or TF1 Hub module), a transformers ALBERT
folder or a keras-hub preset folder. It sits in `checkpoints_convert`, above
`albert_keras.models`, because reading the official formats is this
package's job; the models never import it.
"""

from __future__ import annotations

import glob
import os

import keras

# The model file of a pretraining run's folder, then of a fine-tuning run's.
from checkpoints_convert.preset_sources import RUN_MODELS


def _is_preset(name) -> bool:
    """A preset without a release (albert_small, albert_tiny): random weights."""
    from albert_keras.presets import ALIASES, PRESETS
    from checkpoints_convert.preset_sources import has_release

    if not isinstance(name, str) or has_release(name):
        return False
    return name in PRESETS or name in ALIASES


def _cached(init, random_hint=None):
    """A released preset's bare name -> its weights in the cache (else refused);
    anything else unchanged."""
    from checkpoints_convert.preset_sources import has_release, resolve_preset

    if has_release(init):
        return resolve_preset(init, random_hint)
    return init


def find_vocabulary(init, vocab=None, for_tokenizer=False) -> str:
    """The vocabulary to tokenize with: `vocab`, or one beside `init`.

    Args:
        init: a preset without a release (the embedded SentencePiece model),
            a released preset's name (the vocabulary of its cached weights,
            see `resolve_preset`), a model file or a checkpoint folder /
            prefix.
        vocab: an explicit vocabulary path, returned as is (refused when
            its tokens are not those of a vocabulary kept beside `init`).
        for_tokenizer: the messages speak to a tokenizer's `from_preset`
            caller (Python), not to a command's `--vocab` flag.

    Example:
    >>> find_vocabulary("albert_tiny").endswith(".model")
    True
    """
    from albert_keras.tokenizers.vocabulary_files import (
        VOCABULARY_NAMES,
        check_same_vocabulary,
        vocabulary_beside,
    )
    from checkpoints_convert.preset_sources import is_release_tar, source_kind

    if vocab:
        if isinstance(init, (str, os.PathLike)) and not _is_preset(init):
            check_same_vocabulary(vocab, os.fspath(init))
        return vocab
    if not isinstance(init, (str, os.PathLike)):
        raise ValueError(
            f"`init` is a {type(init).__name__} object, with no vocabulary "
            "file beside it: pass vocab= (--vocab) with the SentencePiece "
            "model or vocab.txt it was pretrained with."
        )
    if _is_preset(init):
        from albert_keras.sample_text import SPM_MODEL_PATH

        return SPM_MODEL_PATH
    init = _cached(init, _TOKENIZER_RANDOM if for_tokenizer else None)
    if is_release_tar(init):
        fix = (
            "build the tokenizer from the vocabulary in it: AlbertTokenizer("
            "'30k-clean.model'), or AlbertWordPieceTokenizer('vocab_chinese.txt') "
            "for a *_zh release."
            if for_tokenizer
            else "pass --vocab with the vocabulary in it (30k-clean.model, or "
            "vocab_chinese.txt in a *_zh release)."
        )
        raise FileNotFoundError(
            f"{init!r} is a packed release: unpack it (tar xzf) and pass the "
            f"folder, or {fix}"
        )
    found = vocabulary_beside(init)
    if found is None:
        if os.path.isdir(init) or not os.path.exists(init):
            source_kind(init)  # no model there either: say what was found
        fix = _TOKENIZER_FIX if for_tokenizer else "pass --vocab with the"
        raise FileNotFoundError(
            f"No vocabulary found beside {init!r} (looked for "
            f"{', '.join(VOCABULARY_NAMES)} and *.model): {fix} "
            "SentencePiece model or vocab.txt the model was pretrained with."
        )
    return found


_TOKENIZER_RANDOM = (
    "A tokenizer needs the release's vocabulary (no random one exists): convert "
    "the release as above, or build the tokenizer from its vocabulary file."
)
_TOKENIZER_FIX = (
    "build the tokenizer from a vocabulary file, AlbertTokenizer('30k-clean.model') "
    "or AlbertWordPieceTokenizer('vocab.txt'), with the"
)


def run_labels(path) -> list | None:
    """The labels of the fine-tuning run `path` comes from (the `settings.json`
    of its folder), else None; ValueError for a settings.json that is not JSON.

    Args:
        path: a `.keras` file (a run's best.keras, or a converted one with
            the settings.json `albert-convert` wrote beside it), a run
            folder, or a transformers folder (its `id2label` names, see
            `hf_labels`); anything else gives None.

    Example:
    >>> run_labels("albert_tiny") is None
    True
    """
    from checkpoints_convert.hf_checkpoint_reader import is_hf_folder
    from checkpoints_convert.hf_labels import hf_labels, settings_beside

    if not isinstance(path, (str, os.PathLike)):
        return None
    path = os.fspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    settings = settings_beside(path)
    if settings is None and is_hf_folder(folder):  # id2label of transformers
        return hf_labels(folder)
    task = settings.get("task") if isinstance(settings, dict) else None
    if isinstance(task, dict) and isinstance(task.get("config"), dict):
        task = task["config"]  # a run's `task.get_config()`
    labels = task.get("labels") if isinstance(task, dict) else None
    return list(labels) if isinstance(labels, list) and labels else None


def resolve_init(init, missing_hint=""):
    """`init` checked: a missing path or an unknown name is refused here.

    A folder holding `pretrainer.keras` (the output of `albert-keras
    pretrain`) or `best.keras` (of `albert-keras finetune`) stands for that
    file; a released preset's name
    ("albert_base_v2") for its weights in the cache (`resolve_preset`; not
    there: refused with the commands that put them there). Presets without
    a release, models and existing paths are returned as they are.

    Args:
        init: what `load_backbone` accepts.
        missing_hint: a sentence added when `init` does not exist.

    Example:
    >>> resolve_init("albert_tiny")
    'albert_tiny'
    """
    from albert_keras.presets import PRESETS
    from checkpoints_convert.preset_sources import near_preset

    if not isinstance(init, str) or _is_preset(init):
        return init
    init = _cached(init, _RANDOM_HINT)
    for name in RUN_MODELS:  # a run's folder: its model
        model = os.path.join(init, name)
        if os.path.isfile(model):
            return model
    if os.path.exists(init) or glob.glob(init + "*.index"):
        return init
    close = near_preset(init)
    if close:
        raise FileNotFoundError(
            f"--init {init!r} is neither a path nor a preset: did you mean {close!r}?"
        )
    raise FileNotFoundError(
        f"--init {init!r} does not exist (no file, folder or checkpoint prefix "
        f"of that name, and not a preset: {', '.join(sorted(PRESETS))})."
        + (" " + missing_hint if missing_hint else "")
    )


_RANDOM_HINT = (
    "Random weights: --init albert_small or albert_tiny (sizes without a "
    "release), or a .keras file of AlbertBackbone.from_preset(name, "
    "load_weights=False)."
)


def load_init_model(init):
    """`init` loaded once: a `.keras` file becomes its model, and so does a
    transformers classifier or tagger folder whose `id2label` names its
    labels (an `AlbertClassifier`, an `AlbertTokenClassifier`); anything else
    is returned unchanged.

    A task model loaded here gives both its backbone (`load_backbone`) and,
    when it is the same task, its head (`reuse_task_head`; a classifier's
    only for the same labels, `other_labels`).
    """
    from checkpoints_convert.hf_checkpoint_reader import is_hf_folder
    from checkpoints_convert.hf_labels import hf_labels

    init = _cached(init)
    if isinstance(init, str) and init.endswith(".keras") and os.path.isfile(init):
        import albert_keras  # noqa: F401  (registers every class of ours)

        return keras.saving.load_model(init, compile=False)
    if isinstance(init, str) and os.path.isdir(init) and is_hf_folder(init):
        if hf_labels(init):  # a classifier's head, named as a run's labels
            from checkpoints_convert.loader import load_official_checkpoint

            return load_official_checkpoint(init, model=_hf_head_kind(init))
    return init


def _hf_head_kind(folder) -> str:
    """ "token_classifier" for a transformers `AlbertForTokenClassification`
    folder (its `architectures`), else "classifier"."""
    from albert_keras.atomic_files import read_json
    from checkpoints_convert.hf_names import has_token_head

    config = read_json(os.path.join(folder, "config.json")) or {}
    token = has_token_head(config.get("architectures"))
    return "token_classifier" if token else "classifier"


def load_backbone(init, vocabulary_size, max_position=None, dtype=None):
    """The backbone to fine-tune: preset name, `.keras` file or official checkpoint.

    Args:
        init: a preset without a release (random initialization, vocabulary
            size taken from the tokenizer), a released preset's name (its
            cached weights, `resolve_preset`), a `.keras` file holding an
            `AlbertBackbone` or any task model (e.g. `pretrainer.keras` of `albert-keras
            pretrain`) or such a model already loaded, an official checkpoint
            (folder, prefix or release `.tar.gz`) or a transformers ALBERT
            folder (`config.json` + `model.safetensors`).
        vocabulary_size: the tokenizer's; checked against the model's.
        max_position: at least this many positions (a loaded model with
            fewer gets its table extended, see `with_positions`).
        dtype: dtype policy of a newly built backbone (a preset).

    Example:
    >>> load_backbone("albert_tiny", 8000).config.vocab_size
    8000
    """
    from albert_keras.config import AlbertConfig
    from albert_keras.models.albert_backbone import AlbertBackbone
    from albert_keras.models.weight_copy import with_positions
    from albert_keras.presets import PRESETS
    from albert_keras.tokenizers.vocabulary_files import check_vocabulary_size

    if _is_preset(init):
        config = AlbertConfig.from_preset(init).replace(vocab_size=vocabulary_size)
        if max_position and config.max_position_embeddings < max_position:
            config = config.replace(max_position_embeddings=max_position)
        return AlbertBackbone(config, dtype=dtype)
    model = load_init_model(init)
    if isinstance(model, keras.Model):
        backbone = model if isinstance(model, AlbertBackbone) else model.backbone
    elif model.endswith(".keras"):
        raise FileNotFoundError(f"--init {init!r} does not exist.")
    elif os.path.exists(model) or glob.glob(model + "*.index"):
        from checkpoints_convert.preset_loader import load_preset

        # Any kind: a release folder, prefix or .tar.gz, a TF1 Hub module, a
        # transformers or keras-hub folder.
        backbone = load_preset(AlbertBackbone, model, dtype=dtype)
    else:
        raise FileNotFoundError(
            f"--init {init!r} is neither a preset ({', '.join(sorted(PRESETS))}), "
            "a .keras file, an official checkpoint folder or prefix, nor a "
            "transformers ALBERT folder."
        )
    check_vocabulary_size(
        backbone.config.vocab_size,
        vocabulary_size,
        "pass the --vocab the model was pretrained with.",
    )
    return with_positions(backbone, max_position or 0)
