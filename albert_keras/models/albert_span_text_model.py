"""`AlbertSpanTextModel`: extractive QA on raw strings, answers out."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_keras.models.albert_text_model import AlbertTextModel
from albert_keras.models.text_model_checks import check_fit
from albert_keras.models.traced_endpoint import add_traced_endpoint
from albert_keras.tokenizers.albert_span_packer import AlbertSpanPacker

# The official SQuAD readers' whitespace (`is_whitespace`): words split here.
_WHITESPACE = "[ \t\r\n\u202f]+"


# The no-answer scores a span model can threshold (see the tasks' span
# decoding): the official one, or that minus the best span's log probability.
NULL_SCORES = ("official", "span_adjusted")

# Windows served per question: a bound on a request's memory and time. 64
# windows cover ~8,300 tokens (~35 KB of English) at the official 384/128,
# several times the longest SQuAD context; see `max_windows`.
MAX_WINDOWS = 64


def check_null_score(null_score):
    """Raises a ValueError naming the allowed values unless one of NULL_SCORES."""
    if null_score not in NULL_SCORES:
        raise ValueError(
            f"Unknown null_score {null_score!r}. Allowed: {', '.join(NULL_SCORES)}"
        )


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertSpanTextModel(AlbertTextModel):
    """Questions and contexts as strings in, answer texts out.

    Everything the fine-tuning evaluation does, in TensorFlow ops, so a
    SavedModel answers questions: the context is split into whitespace words
    and tokenized word by word (the official `doc_tokens`), packed into
    sliding windows with the question (`AlbertSpanPacker`: `max_query_length`,
    `doc_stride`, the maximum-context rule), and the task model's outputs are
    decoded as `decode_spans` decodes them: for `AlbertSpanQA` the
    `n_best_size` best starts and ends of every window, for `AlbertSquadV2`
    its start_n_top x end_n_top beam; spans must lie in the context, end at
    or after their start, have at most `max_answer_length` tokens and start
    where the window gives the token its most context. The answer is the
    context's words that the best span touches, joined by single spaces.

    A request's cost is bounded: each context is read up to the tokens of its
    question's first `max_windows` windows (later windows are dropped, and
    words past the most those can hold are never tokenized), so memory and
    time grow with the batch, not with a context's length. A question or
    context with no tokens answers "". Nothing a client sends makes it fail.

    Outputs (one row per question):
    - `answer`: the best span's words, or "" where `null_odds` exceeds
      `null_threshold` (or no window holds a valid span);
    - `best_span`: the best span's words, never thresholded;
    - `null_odds`: the no-answer score, higher = more likely unanswerable
      (`AlbertSquadV2`: the smallest answer-class logit over the windows;
      `AlbertSpanQA`: the smallest `[CLS]` score minus the best span's; with
      `null_score="span_adjusted"` also `AlbertSquadV2`'s minus the best
      span's log probability); +inf without a valid span;
    - `score`: the best span's score; `start_token`, `end_token`: its first
      and last token among the context's tokens (-1 without a span);
    - `truncated`: True where the context was cut to `max_windows` windows
      (the answer is then the cut context's).

    Use the `best_f1_thresh` that `albert-keras finetune --task squad` chose
    on dev as `null_threshold`; `model.export(path)` writes a SavedModel with
    `serve(question, context)` on `tf.string` [batch].

    Args:
        task_model: `AlbertSquadV2` or `AlbertSpanQA`.
        tokenizer: `AlbertTokenizer` or `AlbertWordPieceTokenizer`.
        sequence_length: int. Window length (official 384).
        doc_stride: int. Context tokens between window starts (128).
        max_query_length: int. Question tokens kept (64).
        max_answer_length: int. Longest answer in tokens (30).
        n_best_size: int. Starts and ends kept per window (`AlbertSpanQA`).
        null_threshold: float. Answer "" where `null_odds` is above it.
        null_score: "official" or "span_adjusted" (as `decode_spans`; use
            the one the threshold was chosen with).
        max_windows: int. Windows per question (64): the context is cut to
            what they hold, `truncated` says so. A request's memory grows
            with its windows: a 384-token window takes ~4 MB for
            albert_tiny, ~50 MB for albert_base (CPU, measured), so lower it
            to serve large models in little memory.

    Example:
    >>> from albert_keras import AlbertBackbone, AlbertConfig, AlbertSquadV2
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> from albert_keras.tokenizers import AlbertTokenizer
    >>> config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    >>> reader = AlbertSquadV2(AlbertBackbone(config))
    >>> tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    >>> model = AlbertSpanTextModel(reader, tokenizer, 64, max_query_length=16)
    >>> out = model({"question": ["Who came?"], "context": ["Emma came home."]})
    >>> sorted(out)[:4], out["truncated"].numpy().tolist()
    (['answer', 'best_span', 'end_token', 'null_odds'], [False])
    """

    def __init__(
        self,
        task_model,
        tokenizer,
        sequence_length=384,
        doc_stride=128,
        max_query_length=64,
        max_answer_length=30,
        n_best_size=20,
        null_threshold=0.0,
        null_score="official",
        max_windows=MAX_WINDOWS,
        packer=None,
        **kwargs,
    ):
        check_null_score(null_score)
        if not isinstance(max_windows, int) or max_windows < 1:
            raise ValueError(
                f"`max_windows` must be a positive integer. Received: "
                f"max_windows={max_windows!r}"
            )
        outputs = getattr(task_model, "output", None)
        names = set(outputs) if isinstance(outputs, dict) else set()
        if not ({"start_logits", "end_logits"} <= names or "cls_logits" in names):
            raise ValueError(
                "AlbertSpanTextModel reads the outputs of AlbertSquadV2 "
                "(`start_top_index`, ..., `cls_logits`) or AlbertSpanQA "
                f"(`start_logits`, `end_logits`). Received: "
                f"{type(task_model).__name__} with outputs {sorted(names)}"
            )
        kwargs.pop("dynamic_length", None)
        if packer is None:  # a loaded model passes its own (no vocabulary yet)
            check_fit(task_model, tokenizer, sequence_length)
            _check_query_room(sequence_length, max_query_length)
            packer = AlbertSpanPacker.for_tokenizer(
                tokenizer,
                sequence_length,
                doc_stride=doc_stride,
                max_query_length=max_query_length,
                name="packer",
            )
        super().__init__(
            task_model, tokenizer, sequence_length, packer=packer, **kwargs
        )
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.max_answer_length = int(max_answer_length)
        self.n_best_size = int(n_best_size)
        self.null_threshold = float(null_threshold)
        self.null_score = null_score
        self.max_windows = max_windows
        self.head = "v2" if "cls_logits" in names else "simple"

    # --- text -> windows ------------------------------------------------------
    def _questions_contexts(self, inputs):
        inputs = self._two_inputs(inputs, "question", "context", "A QA text model")
        questions, contexts = (
            tf.reshape(tf.convert_to_tensor(t, tf.string), [-1]) for t in inputs
        )
        tf.debugging.assert_equal(
            tf.shape(questions),
            tf.shape(contexts),
            message="one context per question: the batches differ in size",
        )
        return questions, contexts

    def _words(self, contexts):
        """Whitespace words of each context, ragged [batch, words], and whether
        words past the most the windows can hold (`_max_words`) were left out.

        The split stops there, so a megabyte of context is not split (nor
        tokenized) word by word.
        """
        limit = self._max_words()
        text = tf.strings.regex_replace(contexts, _WHITESPACE, " ")
        pieces = tf.strings.split(text, maxsplit=limit)  # then the rest, unsplit
        rest = tf.strings.strip(pieces[:, limit:])
        cut = tf.reduce_any(tf.strings.length(rest) > 0, axis=1)
        words = pieces[:, :limit]
        return tf.ragged.boolean_mask(words, tf.strings.length(words) > 0), cut

    def _max_words(self):
        """Words enough for `max_windows` windows at any question length: a
        word has one token or more (one that normalizes to nothing, say a
        lone combining mark, has none: such contexts are cut a little early)."""
        return self.sequence_length + (self.max_windows - 1) * self.doc_stride

    def pack(self, inputs):
        """The windows (`AlbertSpanPacker`'s dict) and the words of each context.

        A context is cut to the tokens of its question's first `max_windows`
        windows (`_truncated` says where); a question without tokens gets no
        context, so no window.
        """
        questions, contexts = self._questions_contexts(inputs)
        question = self.tokenizer(questions)
        contexts = tf.where(question.row_lengths() > 0, contexts, "")
        words, cut = self._words(contexts)
        pieces = self.tokenizer(words.flat_values)  # [all words, pieces]
        token_word = pieces.value_rowids()
        lengths = tf.math.unsorted_segment_sum(
            pieces.row_lengths(),
            words.value_rowids(),
            tf.shape(contexts, out_type=tf.int64)[0],
        )
        capacity = self.packer.window_capacity(question.row_lengths(), self.max_windows)
        keep = tf.ragged.range(lengths) < capacity[:, None]
        context = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(pieces.flat_values, keep.flat_values),
            tf.minimum(lengths, capacity),
        )
        windows = self.packer(question, context)
        # Every context token's word, numbered over the whole batch.
        windows["_token_word"] = tf.boolean_mask(token_word, keep.flat_values)
        windows["_context_starts"] = context.row_starts()
        windows["_truncated"] = cut | (lengths > capacity)
        return windows, words

    # --- windows -> answers ---------------------------------------------------
    def _candidates(self, outputs):
        """(starts, ends, scores) [windows, candidates] and each window's null."""
        if self.head == "v2":
            start_index = outputs["start_top_index"]
            k = tf.shape(outputs["end_top_index"])[1] // tf.shape(start_index)[1]
            starts = tf.repeat(start_index, k, axis=1)
            ends = outputs["end_top_index"]
            scores = (
                tf.repeat(outputs["start_top_log_probs"], k, axis=1)
                + outputs["end_top_log_probs"]
            )
            return starts, ends, scores, tf.reshape(outputs["cls_logits"], [-1])
        start_logits, end_logits = outputs["start_logits"], outputs["end_logits"]
        n = tf.minimum(self.n_best_size, tf.shape(start_logits)[1])
        start_values, start_index = tf.math.top_k(start_logits, n)
        end_values, end_index = tf.math.top_k(end_logits, n)
        starts = tf.repeat(start_index, n, axis=1)
        ends = tf.tile(end_index, [1, n])
        scores = tf.repeat(start_values, n, axis=1) + tf.tile(end_values, [1, n])
        return starts, ends, scores, start_logits[:, 0] + end_logits[:, 0]

    def _valid_scores(self, windows, starts, ends, scores):
        """Candidate scores [windows, candidates], -inf where no span can be."""
        offset = windows["doc_offset"][:, None]
        length = tf.reduce_sum(windows["segment_ids"], axis=1, keepdims=True) - 1
        max_context = tf.gather(windows["token_is_max_context"], starts, batch_dims=1)
        valid = (
            (starts >= offset)
            & (starts < offset + length)
            & (ends >= offset)
            & (ends < offset + length)
            & (ends >= starts)
            & (ends - starts + 1 <= self.max_answer_length)
            & (max_context > 0)
        )
        return tf.where(valid, tf.cast(scores, tf.float32), -float("inf"))

    def _decode(self, windows, outputs, words):
        batch = words.nrows(out_type=tf.int32)
        starts, ends, scores, row_null = self._candidates(outputs)
        starts, ends = tf.cast(starts, tf.int32), tf.cast(ends, tf.int32)
        scores = self._valid_scores(windows, starts, ends, scores)
        pick = tf.argmax(scores, axis=1, output_type=tf.int32)
        row_best = tf.gather(scores, pick, batch_dims=1)
        example = windows["example_index"]
        best = tf.math.unsorted_segment_max(row_best, example, batch)
        # The first window holding the example's best span (as decode_spans).
        rows = tf.range(tf.shape(example)[0])
        first = tf.where(
            (row_best == tf.gather(best, example)) & (row_best > -float("inf")),
            rows,
            tf.int32.max,
        )
        row = tf.math.unsorted_segment_min(first, example, batch)
        found = row < tf.int32.max
        row = tf.where(found, row, 0)
        null = tf.math.unsorted_segment_min(
            tf.cast(row_null, tf.float32), example, batch
        )
        if self.head == "simple" or self.null_score == "span_adjusted":
            null = null - best
        null_odds = tf.where(found, null, float("inf"))

        def context_token(candidates):
            chosen = _take(tf.gather(candidates, pick, batch_dims=1), row)
            start = _take(windows["doc_start"] - windows["doc_offset"], row)
            return tf.where(found, chosen + start, -1)

        start_token, end_token = context_token(starts), context_token(ends)
        text = self._span_text(windows, words, start_token, end_token, found)
        return {
            "answer": tf.where(null_odds > self.null_threshold, "", text),
            "best_span": text,
            "null_odds": null_odds,
            "score": tf.where(found, best, -float("inf")),
            "start_token": start_token,
            "end_token": end_token,
            "truncated": windows["_truncated"],
        }

    @staticmethod
    def _span_text(windows, words, start_token, end_token, found):
        """The words the span's tokens come from, joined by single spaces."""
        base = tf.cast(windows["_context_starts"], tf.int32)
        token_word = tf.cast(windows["_token_word"], tf.int32)

        def word(token):  # token -> word, numbered over the batch
            return _take(token_word, tf.where(found, base + token, 0))

        first_word = tf.where(found, word(start_token), 0)
        last_word = tf.where(found, word(end_token), -1)
        span = tf.ragged.range(first_word, last_word + 1)
        return tf.strings.reduce_join(
            tf.gather(words.flat_values, span), axis=-1, separator=" "
        )

    def call(self, inputs, training=False):
        windows, words = self.pack(inputs)
        names = [name for name in self.task_model.input if name in windows]
        outputs = self.task_model(
            {name: windows[name] for name in names}, training=training
        )
        return self._decode(windows, outputs, words)

    def _default_serving_rows(self):
        """Questions served at once (unless `serving_rows` is set): at most
        512 windows go through the model."""
        return max(1, 512 // self.max_windows)

    def _add_endpoints(self, archive):
        """`serve(question [batch], context [batch])` -> answers."""
        spec = tf.TensorSpec([None], tf.string)
        add_traced_endpoint(
            archive,
            "serve",
            lambda question, context: self._in_rows(
                lambda x, y: self((x, y), training=False), question, context
            ),
            [spec, spec],
        )

    def get_config(self):
        return {
            **super().get_config(),
            "doc_stride": self.doc_stride,
            "max_query_length": self.max_query_length,
            "max_answer_length": self.max_answer_length,
            "n_best_size": self.n_best_size,
            "null_threshold": self.null_threshold,
            "null_score": self.null_score,
            "max_windows": self.max_windows,
        }


def _take(values, index):
    """`tf.gather(values, index)` where index 0 is valid even for an empty
    `values` (a batch without any window: every row reads 0, then masked)."""
    return tf.gather(tf.concat([values, tf.zeros([1], values.dtype)], 0), index)


def _check_query_room(sequence_length, max_query_length):
    """ValueError when the question would leave no context in a window; the
    message names the default, which `with_tokenizer(qa, tokenizer, 64)`
    used without the user writing it (the packer's said "Received:
    max_query_length=64" only)."""
    if not (isinstance(sequence_length, int) and isinstance(max_query_length, int)):
        return  # the packer names a value that is no integer
    if max_query_length <= sequence_length - 4:
        return
    default = " (the official default)" if max_query_length == 64 else ""
    raise ValueError(
        f"`max_query_length`={max_query_length}{default} leaves no room for the "
        f"context in windows of sequence_length={sequence_length}: [CLS], two "
        f"[SEP] and one context token need it at most {sequence_length - 4}. "
        f"Pass a smaller one, e.g. max_query_length={max(1, sequence_length // 4)}"
        " (`with_tokenizer` and AlbertSpanTextModel take it), or a longer "
        "sequence_length (official 384)."
    )
