"""`PretrainingDataOptions`: how `create_pretraining_data` makes instances."""

from __future__ import annotations

import dataclasses
from typing import Any

from albert_keras.pretraining.ngram_masker import NgramMasker
from albert_keras.pretraining.segment_pairer import SegmentPairer


@dataclasses.dataclass(frozen=True)
class PretrainingDataOptions:
    """The settings of `create_pretraining_data` (the official script's flags).

    Checked when made: a bad value is a `ValueError` naming it, before any
    file is read.

    Args:
        tokenizer: instead of a `vocab` file, a `SentencePieceEncoder`, an
            `AlbertTokenizer` or `AlbertWordPieceTokenizer` layer (these
            two in `tf.data`), or a `CorpusTokenizer` (it runs in this
            process; workers only pair, mask and write).
        lowercase: the official `do_lower_case` (True for the released
            English models).
        max_seq_length: pieces per instance (512 in the paper).
        max_predictions_per_seq: masked positions per instance at most.
        masked_lm_prob: share of pieces to mask (0.15); 0 writes unmasked
            records for `dynamic_masking`.
        short_seq_prob: share of documents with a random shorter target (0.1).
        dupe_factor: passes over the data, each with new pairs and masks (the
            official default is 40; or write once with `masked_lm_prob=0` and
            mask in `tf.data`).
        ngram: longest masked span in words; p(n) proportional to 1/n.
        do_whole_word_mask: mask whole words (official default True).
        random_next_sentence: NSP pairs (B from another document half the
            time, label 1) instead of sentence order (label 1 = swapped).
        split_sentences: cut each line into sentences (for text with a
            paragraph per line).
        seed: the same seed, inputs and `num_shards` write the same bytes.
        num_shards: output files (default: one per input file).
        num_workers: processes masking and writing, one input file each at
            a time, and threads tokenizing.
        verbose: print a progress line.

    Example:
    >>> options = PretrainingDataOptions(max_seq_length=128, dupe_factor=4)
    >>> options.masked_lm_prob
    0.15
    """

    tokenizer: Any = None
    lowercase: bool = True
    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    dupe_factor: int = 1
    ngram: int = 3
    do_whole_word_mask: bool = True
    random_next_sentence: bool = False
    split_sentences: bool = False
    seed: int = 12345
    num_shards: int | None = None
    num_workers: int = 1
    verbose: bool = True

    def __post_init__(self):
        for name, value in (
            ("dupe_factor", self.dupe_factor),
            ("num_workers", self.num_workers),
            ("num_shards", 1 if self.num_shards is None else self.num_shards),
        ):
            if int(value) < 1:
                raise ValueError(
                    f"`{name}` must be at least 1. Received: {name}={value}"
                )
        # The parts check their own arguments.
        SegmentPairer(
            self.max_seq_length, self.short_seq_prob, self.random_next_sentence
        )
        NgramMasker(
            1,
            masked_lm_prob=self.masked_lm_prob,
            max_predictions_per_seq=self.max_predictions_per_seq,
            ngram=self.ngram,
        )

    @classmethod
    def from_keywords(
        cls,
        keywords: dict[str, Any],
        options: PretrainingDataOptions | None = None,
        caller: str = "create_pretraining_data",
    ) -> PretrainingDataOptions:
        """`options` (default: the defaults) with the fields in `keywords` changed.

        Raises:
            TypeError: a keyword that is not a field, naming the allowed ones.
        """
        names = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(set(keywords) - set(names))
        if unknown:
            raise TypeError(
                f"{caller}() got unknown keyword argument(s): "
                f"{', '.join(unknown)}. Allowed: {', '.join(names)}"
            )
        return dataclasses.replace(
            options if options is not None else cls(), **keywords
        )
