"""`AlbertTokenizerBase`: the vocabulary API both ALBERT tokenizers share."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.tokenizers.tensorflow_inputs import keep_tensorflow_inputs

# `from_preset` finds a preset's vocabulary with checkpoints_convert, a layer
# above the tokenizers: the package root installs that function here.
_VOCABULARY_FINDER = {}


def set_vocabulary_finder(find) -> None:
    """Installs `find(preset) -> vocabulary path` for `from_preset`."""
    _VOCABULARY_FINDER["find"] = find


class AlbertTokenizerBase(keras.layers.Layer):
    """Text -> ids, in the graph: the part of a tokenizer that is not its rules.

    `AlbertTokenizer` (SentencePiece) and `AlbertWordPieceTokenizer`
    (WordPiece) subclass it. It holds the tokens in id order and answers the
    vocabulary questions (`vocabulary_size`, `get_vocabulary`, `id_to_token`,
    `token_to_id`, `special_token_ids`), takes Python strings and lists as
    inputs, returns ragged int32 ids (1-D for a scalar) and drops special ids
    before detokenizing.

    A subclass loads its vocabulary file and calls `_set_tokens`, and defines
    `_tokenize(texts)` (a 1-D string tensor -> ragged ids), `preprocess`,
    `detokenize` and its assets (`save_assets` / `load_assets`). It sets
    `_SPECIALS` (name -> token of `pad`, `unk`, `cls`, `sep`, `mask`) and
    `_NO_VOCABULARY` (the error's words when the vocabulary is missing).

    Args:
        lowercase: bool. `do_lower_case` of the official tokenizers.
    """

    _SPECIALS: dict[str, str] = {}
    _NO_VOCABULARY = "no vocabulary yet"

    def __init__(self, lowercase=True, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        keep_tensorflow_inputs(self)
        self.lowercase = bool(lowercase)
        self._tokens = None

    def _set_tokens(self, tokens: list[str], unk_id: int | None = None) -> None:
        """Makes `tokens` (in id order) the vocabulary.

        Strings that are not tokens get `unk_id` (default: the id of the
        `unk` special token).
        """
        token_ids = {token: i for i, token in enumerate(tokens)}
        if unk_id is None:
            unk_id = token_ids[self._SPECIALS["unk"]]
        self._tokens = list(tokens)
        self._token_ids = token_ids
        self._unk_id = int(unk_id)
        self._token_table = tf.constant(self._tokens)

    def _require_vocabulary(self):
        if self._tokens is None:
            raise ValueError(
                f"This {type(self).__name__} has {self._NO_VOCABULARY}, "
                "or load a saved model."
            )

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """The tokenizer of a preset, as keras-hub's `Tokenizer.from_preset`.

        Args:
            preset: a release's name ("albert_base_v2", "base": the
                vocabulary kept beside its weights in `$ALBERT_KERAS_HOME`),
                "albert_small" / "albert_tiny" (the embedded vocabulary), or
                a folder or model file with its vocabulary: a release, a
                transformers or keras-hub folder, a fine-tuning or pretraining
                run, a `.keras` file.
            **kwargs: the tokenizer's arguments (`lowercase`, ...).

        Raises:
            FileNotFoundError: no vocabulary there (the message says where to
                get it); ValueError: a vocabulary of the other kind.

        Example:
        >>> import albert_keras  # installs the vocabulary finder
        >>> from albert_keras.tokenizers import AlbertTokenizer
        >>> AlbertTokenizer.from_preset("albert_tiny").vocabulary_size()
        8000
        """
        from albert_keras.tokenizers.vocabulary_files import load_tokenizer

        if "find" not in _VOCABULARY_FINDER:
            raise RuntimeError(
                "No vocabulary finder installed: import albert_keras (the "
                "package) first."
            )
        vocabulary = _VOCABULARY_FINDER["find"](preset)
        tokenizer = load_tokenizer(vocabulary, **kwargs)
        if not isinstance(tokenizer, cls):
            kind = type(tokenizer).__name__
            raise ValueError(
                f"{preset!r} has a {kind} vocabulary ({vocabulary}): use "
                f"{kind}.from_preset({preset!r})."
            )
        return tokenizer

    # --- vocabulary -----------------------------------------------------------
    def vocabulary_size(self) -> int:
        """Number of tokens, special tokens included (ids run 0 .. size - 1)."""
        self._require_vocabulary()
        return len(self._tokens)

    def get_vocabulary(self) -> list[str]:
        """All tokens in id order."""
        self._require_vocabulary()
        return list(self._tokens)

    def id_to_token(self, token_id: int) -> str:
        """The token of an id."""
        self._require_vocabulary()
        if not 0 <= int(token_id) < len(self._tokens):
            raise ValueError(
                f"`token_id` must be in [0, {len(self._tokens)}). "
                f"Received: token_id={token_id}"
            )
        return self._tokens[int(token_id)]

    def token_to_id(self, token: str) -> int:
        """The id of a token (the unknown token's for a string that is not one)."""
        self._require_vocabulary()
        return self._token_ids.get(token, self._unk_id)

    @property
    def special_token_ids(self) -> dict:
        """`pad`, `unk`, `cls`, `sep`, `mask` ids.

        Padding is 0, as the official code pads, whatever token is there.
        """
        self._require_vocabulary()
        ids = {name: self.token_to_id(t) for name, t in self._SPECIALS.items()}
        return {**ids, "pad": 0, "unk": self._unk_id}

    # --- tokenizing -----------------------------------------------------------
    def tokenize_pieces(self, inputs):
        """The official tokens (ragged strings) of a batch of texts."""
        return self.tokens_of(self.call(inputs))

    def tokens_of(self, ids):
        """The tokens (strings) of a tensor of ids of any shape, in the graph."""
        self._require_vocabulary()
        return tf.gather(self._token_table, ids)

    def __call__(self, inputs, *args, **kwargs):
        # Python strings and lists are welcome (tf.data map functions too).
        if isinstance(inputs, (str, bytes, list, tuple)):
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        self._require_vocabulary()
        inputs = tf.convert_to_tensor(inputs, tf.string)
        ids = self._tokenize(tf.reshape(inputs, [-1]))
        return ids[0] if inputs.shape.rank == 0 else ids

    def _tokenize(self, texts):
        """Ragged int32 ids [batch, None] of a 1-D string tensor."""
        raise NotImplementedError

    def tokenize_continuations(self, texts):
        """Ragged int32 ids [batch, None] of texts that continue a word.

        The pieces of a text that directly follows something else (a
        `[MASK]`, say) with no space between: as the text would be tokenized
        inside a longer one. WordPiece starts a word at every punctuation
        mark and space anyway, so this is plain tokenization here;
        `AlbertTokenizer` leaves out SentencePiece's word-start "▁".

        Args:
            texts: 1-D string tensor.
        """
        self._require_vocabulary()
        return self._tokenize(tf.convert_to_tensor(texts, tf.string))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor([None, None], dtype="int32", ragged=True)

    def detokenize(self, ids):
        """Ids back to text, special and padding ids dropped (`[UNK]` stays).

        Args:
            ids: the ids of one text (1-D: gives a scalar string, as the
                tokenizer gives 1-D ids for one string), or a batch (ragged
                or dense [batch, None], or Python lists): a string per row.

        Example:
        >>> from albert_keras.tokenizers import AlbertTokenizer
        >>> tokenizer = AlbertTokenizer.from_preset("albert_tiny")
        >>> tokenizer.detokenize(tokenizer("Emma Woodhouse")).numpy()
        b'emma woodhouse'
        """
        if isinstance(ids, (list, tuple)) and not ids:
            ids = tf.zeros([0], tf.int32)
        elif isinstance(ids, (list, tuple)) and isinstance(ids[0], (list, tuple)):
            ids = tf.ragged.constant(ids, tf.int32)
        elif not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
        rank = ids.shape.rank
        if rank not in (1, 2) or not ids.dtype.is_integer:
            raise ValueError(
                "`detokenize` takes integer ids of one text (1-D) or of a batch "
                f"(2-D). Received: {ids.dtype.name} of shape {ids.shape}."
            )
        if rank == 1:
            return self._detokenize(self._without_special_ids(ids[None]))[0]
        return self._detokenize(self._without_special_ids(ids))

    def _detokenize(self, ids):
        """Strings [batch] of ragged ids [batch, None] without special ids."""
        raise NotImplementedError

    def _without_special_ids(self, ids):
        """Ids (ragged or dense [batch, None]) as a ragged tensor without the
        special and padding ids (the unknown token's stays)."""
        self._require_vocabulary()
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ids))
        specials = [v for k, v in self.special_token_ids.items() if k != "unk"]
        keep = tf.reduce_all(
            tf.stack([ids.flat_values != s for s in specials], axis=0), axis=0
        )
        return tf.ragged.boolean_mask(ids, ids.with_flat_values(keep))

    def get_config(self):
        return {**super().get_config(), "lowercase": self.lowercase}
