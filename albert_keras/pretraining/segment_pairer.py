"""`SegmentPairer`: documents -> `(A, B, label)` segment pairs, as the official code.

The official `create_instances_from_document`, on token offsets: segments
(input lines) of a document are gathered into a chunk until it reaches the
target length (`max_seq_length - 3`, or with probability `short_seq_prob` a
random length in [2, max]), the chunk is split into A and B at a random
segment boundary, and for sentence-order prediction A and B are swapped with
probability 0.5 (label 1 = swapped). With `random_next_sentence` (NSP, for
the paper's Table 5 comparison) B instead comes from a random other document
with probability 0.5 (label 1 = random), and the unused segments are put back.
The pair is then cut to `max_seq_length - 3` pieces by the official
`truncate_seq_pair` (one piece at a time from the longer side, front or back
at random; here in closed form: the same counts, a binomial front share).

One deliberate difference: the official code pairs a chunk of a single
segment (a long paragraph, or a one-line document) with a random other
document even for SOP, which puts NSP examples labelled "swapped" into SOP
data. Here such a segment is cut in two at a random word start instead, so
every SOP pair is two consecutive pieces of one document; a one-piece
segment cannot be cut and is skipped (counted in `skipped`).
"""

from __future__ import annotations

import numpy as np


class SegmentPairer:
    """Cuts tokenized documents into SOP (or NSP) segment pairs.

    Args:
        max_seq_length: int. Pairs fit `[CLS] a [SEP] b [SEP]` in this many
            pieces (at least 5).
        short_seq_prob: float. Share of documents given a random shorter
            target length (0.1 in the paper).
        random_next_sentence: bool. NSP pairs (B from another document half
            of the time) instead of sentence-order pairs.
        word_starts: bool array over the vocabulary: where a lone segment may
            be cut (see `NgramMasker.word_starts_of`); without it, anywhere.

    Example:
    >>> import numpy as np
    >>> pairer = SegmentPairer(max_seq_length=16, short_seq_prob=0.0)
    >>> ids = np.arange(5, 35)
    >>> spans, labels, skipped = pairer.pairs(
    ...     ids, np.array([5, 5, 5, 5, 5, 5]), np.array([0, 6]),
    ...     np.random.default_rng(0))
    >>> spans.shape[1], skipped
    (4, 0)
    """

    def __init__(
        self,
        max_seq_length: int = 512,
        short_seq_prob: float = 0.1,
        random_next_sentence: bool = False,
        word_starts=None,
    ):
        if max_seq_length < 5:
            raise ValueError(
                "`max_seq_length` must be at least 5 ([CLS] a [SEP] b [SEP] with "
                f"one piece each). Received: max_seq_length={max_seq_length}"
            )
        if not 0.0 <= short_seq_prob <= 1.0:
            raise ValueError(
                "`short_seq_prob` must be in [0, 1]. "
                f"Received: short_seq_prob={short_seq_prob}"
            )
        self.max_seq_length = int(max_seq_length)
        self.short_seq_prob = float(short_seq_prob)
        self.random_next_sentence = bool(random_next_sentence)
        self.word_starts = None if word_starts is None else np.asarray(word_starts)

    def pairs(self, ids, segment_lengths, document_starts, rng: np.random.Generator):
        """Segment pairs of the documents, as token offsets into `ids`.

        Args:
            ids: int array: the pieces of all segments, back to back.
            segment_lengths: int array [segments]: pieces per segment (> 0).
            document_starts: int array [documents + 1]: the first segment of
                each document, then the number of segments.
            rng: the generator every draw comes from.

        Returns:
            `(spans, labels, skipped)`: int64 [pairs, 4] `(a_start, a_end,
            b_start, b_end)` after truncation, int32 labels [pairs] (1 =
            swapped, or random next with `random_next_sentence`), and the
            number of lone one-piece segments that could not be paired.
        """
        segment_lengths = np.asarray(segment_lengths, np.int64)
        seg_end = np.cumsum(segment_lengths)
        seg_start = seg_end - segment_lengths
        seg_start_list, seg_end_list = seg_start.tolist(), seg_end.tolist()
        lengths = segment_lengths.tolist()
        doc_starts = np.asarray(document_starts, np.int64).tolist()
        num_docs = len(doc_starts) - 1
        max_tokens = self.max_seq_length - 3
        nsp = self.random_next_sentence
        spans, labels = [], []
        skipped = 0
        for doc in range(num_docs):
            first_seg, end_seg = doc_starts[doc], doc_starts[doc + 1]
            target = max_tokens
            if rng.random() < self.short_seq_prob:
                target = int(rng.integers(2, max_tokens + 1))
            chunk_first, length, i = first_seg, 0, first_seg
            while i < end_seg:
                length += lengths[i]
                if i == end_seg - 1 or length >= target:
                    count = i - chunk_first + 1
                    a_end = 1 if count == 1 else int(rng.integers(1, count))
                    a = (
                        seg_start_list[chunk_first],
                        seg_end_list[chunk_first + a_end - 1],
                    )
                    if count == 1 and not nsp:
                        pair = self._split_lone_segment(ids, a, rng)
                        if pair is None:
                            skipped += 1
                        else:
                            spans.append(pair[0])
                            labels.append(pair[1])
                    elif count == 1 or (nsp and rng.random() < 0.5):
                        other = doc
                        if num_docs > 1:  # any other document, uniformly
                            other = int(rng.integers(0, num_docs - 1))
                            other += other >= doc
                        o_first, o_end = doc_starts[other], doc_starts[other + 1]
                        start = o_first + int(rng.integers(0, o_end - o_first))
                        needed = seg_start_list[start] + target - (a[1] - a[0])
                        last = start + int(
                            np.searchsorted(seg_end[start:o_end], needed, "left")
                        )
                        last = min(last, o_end - 1)
                        spans.append((*a, seg_start_list[start], seg_end_list[last]))
                        labels.append(1)
                        i -= count - a_end  # the unused segments go back
                    else:
                        b = (seg_start_list[chunk_first + a_end], seg_end_list[i])
                        if not nsp and rng.random() < 0.5:
                            spans.append((*b, *a))
                            labels.append(1)
                        else:
                            spans.append((*a, *b))
                            labels.append(0)
                    chunk_first, length = i + 1, 0
                i += 1
        spans = np.array(spans, np.int64).reshape(-1, 4)
        labels = np.array(labels, np.int32)
        return self._truncate(spans, max_tokens, rng), labels, skipped

    def _split_lone_segment(self, ids, segment, rng):
        start, end = segment
        if end - start < 2:
            return None
        cuts = np.arange(start + 1, end)
        if self.word_starts is not None:
            at_word = cuts[self.word_starts[ids[start + 1 : end]]]
            cuts = at_word if len(at_word) else cuts[len(cuts) // 2 :][:1]
        cut = int(cuts[int(rng.integers(0, len(cuts)))])
        if rng.random() < 0.5:
            return (cut, end, start, cut), 1
        return (start, cut, cut, end), 0

    @staticmethod
    def _truncate(spans, max_tokens, rng):
        """The official `truncate_seq_pair`, in closed form for all pairs at once.

        The official loop removes one piece at a time from the longer side
        (B on ties), from the front or the back with probability 0.5. How
        many pieces each side loses follows from the lengths alone; how many
        of them come off the front is Binomial(k, 0.5).
        """
        a_len = spans[:, 1] - spans[:, 0]
        b_len = spans[:, 3] - spans[:, 2]
        excess = np.maximum(a_len + b_len - max_tokens, 0)
        from_a = np.minimum(excess, np.maximum(a_len - b_len, 0))
        from_b = np.minimum(excess, np.maximum(b_len - a_len, 0))
        rest = excess - from_a - from_b  # then alternately, B first
        cut_a = from_a + rest // 2
        cut_b = from_b + rest - rest // 2
        front_a = rng.binomial(cut_a, 0.5)
        front_b = rng.binomial(cut_b, 0.5)
        out = spans.copy()
        out[:, 0] += front_a
        out[:, 1] -= cut_a - front_a
        out[:, 2] += front_b
        out[:, 3] -= cut_b - front_b
        return out
