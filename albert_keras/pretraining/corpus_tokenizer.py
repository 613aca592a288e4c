"""`CorpusTokenizer`: lines of a corpus -> ids in batches, plus the vocabulary facts.

A thin driver over the tokenizers. A SentencePiece `.model` (the English
releases) is encoded by `SentencePieceEncoder` with the `sentencepiece`
package, without TensorFlow (data creation then never imports it). A
WordPiece `vocab.txt` (the `*_zh` releases) goes through
`AlbertWordPieceTokenizer` in `tf.data` (in parallel threads), and so does
a TensorFlow tokenizer layer passed in (`AlbertTokenizer` gives the
`SentencePieceEncoder`'s ids). Either way it hands back NumPy ids, and it
knows what data creation needs from the vocabulary: the special ids and
which ids begin a word (the official start-piece rules).
"""

from __future__ import annotations

import os

import numpy as np

from albert_keras.pretraining.ngram_masker import NgramMasker
from albert_keras.pretraining.sentencepiece_encoder import SentencePieceEncoder


class CorpusTokenizer:
    """Batch tokenization of corpus lines for pretraining data.

    Args:
        vocab: path of a SentencePiece `.model` or a WordPiece `vocab.txt`;
            default: the embedded `austen-8k.model`.
        lowercase: bool. Lowercase (and for WordPiece strip accents) as the
            released uncased models; the official `do_lower_case`.
        tokenizer: instead of `vocab`, a `SentencePieceEncoder`, or an
            `AlbertTokenizer` or `AlbertWordPieceTokenizer` layer (or one
            with the same API: called on a batch of strings it returns
            ragged ids), run in `tf.data`.
        batch_size: int. Lines per tokenizer call in `tf.data`.
        num_threads: int. Threads encoding (`SentencePieceEncoder`) or
            parallel tokenizer calls in `tf.data`.

    Example:
    >>> tokenizer = CorpusTokenizer()
    >>> ids, lengths = tokenizer.encode(["Emma Woodhouse, handsome.", ""])
    >>> lengths.tolist()[1], int(tokenizer.cls_id)
    (0, 2)
    """

    def __init__(
        self,
        vocab: str | None = None,
        lowercase: bool = True,
        *,
        tokenizer=None,
        batch_size: int = 1024,
        num_threads: int = 1,
    ):
        self.batch_size = int(batch_size)
        self.num_threads = max(1, int(num_threads))
        if tokenizer is None:
            tokenizer, pieces = self._load(vocab, lowercase, self.num_threads)
        else:
            pieces = self._pieces_of(tokenizer)
        self.tokenizer = tokenizer
        self.pieces = pieces
        self.is_sentencepiece = not hasattr(tokenizer, "vocabulary")
        self.in_graph = not isinstance(tokenizer, SentencePieceEncoder)
        self.vocabulary_size = len(pieces)
        special = tokenizer.special_token_ids
        self.cls_id, self.sep_id = int(special["cls"]), int(special["sep"])
        self.mask_id = int(special["mask"])
        self.unk_id = int(special["unk"])
        self.word_starts = NgramMasker.word_starts_of(pieces, self.is_sentencepiece)
        if self.in_graph:
            # One eager call first: a tokenizer may build tables lazily, which
            # only works outside the `tf.data` graph; a broken one fails here.
            self.tokenizer(["warm up"])
        self._tokenize = None  # traced once, at the first `encode`

    @staticmethod
    def _load(vocab, lowercase, num_threads):
        from albert_keras.sample_text import SPM_MODEL_PATH

        vocab = vocab or SPM_MODEL_PATH
        if os.path.isdir(vocab):
            raise ValueError(
                f"--vocab {vocab!r} is a folder; pass the vocabulary file in it "
                "(a SentencePiece .model such as 30k-clean.model, or a vocab.txt)."
            )
        if not os.path.isfile(vocab):
            raise ValueError(
                f"Vocabulary file {vocab!r} not found. Pass a SentencePiece .model "
                "(e.g. the release's 30k-clean.model, or one made by `albert-keras "
                "vocab`) or a WordPiece vocab.txt."
            )
        if vocab.endswith(".vocab"):
            raise ValueError(
                f"{vocab!r} looks like a SentencePiece .vocab listing; pass the "
                ".model file beside it (e.g. 30k-clean.model)."
            )
        if not vocab.endswith(".txt"):
            import sentencepiece as spm

            try:
                processor = spm.SentencePieceProcessor(model_file=vocab)
            except (OSError, RuntimeError) as e:
                if vocab.endswith(".model"):
                    raise ValueError(
                        f"{vocab!r} is not a readable SentencePiece model ({e}). "
                        "Pass the release's 30k-clean.model or one made by "
                        "`albert-keras vocab`."
                    ) from None
                processor = None  # a WordPiece vocabulary with another name
            if processor is not None:
                encoder = SentencePieceEncoder(
                    vocab, lowercase, num_threads=num_threads
                )
                return encoder, encoder.pieces
        from albert_keras.tokenizers.albert_wordpiece_tokenizer import (
            AlbertWordPieceTokenizer,
        )

        tokenizer = AlbertWordPieceTokenizer(vocab, lowercase=lowercase)
        return tokenizer, list(tokenizer.vocabulary)

    @staticmethod
    def _pieces_of(tokenizer):
        if isinstance(tokenizer, SentencePieceEncoder):
            return list(tokenizer.pieces)
        if hasattr(tokenizer, "vocabulary"):
            return list(tokenizer.vocabulary)
        return [tokenizer.id_to_token(i) for i in range(tokenizer.vocabulary_size())]

    def encode(self, lines) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every line, back to back, and the number of ids per line.

        Args:
            lines: list of str.

        Returns: `(ids, lengths)`: int32 [total], int64 [len(lines)].
        """
        if not len(lines):
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        if not self.in_graph:
            return self.tokenizer.encode(lines)
        import tensorflow as tf

        if self._tokenize is None:
            self._tokenize = tf.function(
                self.tokenizer.__call__,
                input_signature=[tf.TensorSpec([None], tf.string)],
            )
        data = tf.data.Dataset.from_tensor_slices(tf.constant(lines, tf.string))
        data = data.batch(self.batch_size).map(
            self._tokenize, num_parallel_calls=self.num_threads, deterministic=True
        )
        options = tf.data.Options()
        options.threading.private_threadpool_size = self.num_threads
        ids, lengths = [], []
        for batch in data.with_options(options).prefetch(2):
            ids.append(batch.flat_values.numpy().astype(np.int32))
            lengths.append(batch.row_lengths().numpy())
        return np.concatenate(ids), np.concatenate(lengths).astype(np.int64)
