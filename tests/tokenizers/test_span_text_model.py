"""Extractive QA on raw strings: the in-graph decoding is the evaluation's."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from albert_test_case import max_abs_diff, micro_config, task_file

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertSpanQA, AlbertSquadV2
from albert_keras.models import AlbertSpanTextModel, with_tokenizer
from albert_keras.sample_text import SPM_MODEL_PATH, read_paragraphs
from albert_keras.tasks.span_predictions import decode_spans
from albert_keras.tasks.squad_features import squad_features
from albert_keras.tasks.squad_reader import read_squad_file
from albert_keras.tokenizers import AlbertTokenizer

# Short windows: most disfl_qa contexts need several (stride, max context).
LENGTH, STRIDE, QUERY, ANSWER = 48, 16, 12, 8


@pytest.fixture(scope="module")
def dev_questions():
    examples, dataset, _ = read_squad_file(task_file("disfl_qa", "dev.json"), False)
    contexts = {
        qa["id"]: paragraph["context"]
        for article in dataset
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    }
    chosen = examples[:24]
    return chosen, [e["question"] for e in chosen], [contexts[e["id"]] for e in chosen]


def _reader(head):
    keras.utils.set_random_seed(7)
    config = micro_config(vocab_size=8000, max_position_embeddings=LENGTH)
    backbone = AlbertBackbone(config)
    if head == "v2":
        return AlbertSquadV2(backbone, start_n_top=3, end_n_top=4)
    return AlbertSpanQA(backbone)


def _evaluation_answers(model, examples, null_score="official"):
    """What `albert-keras finetune` scores: squad_features, predict, decode_spans."""
    features, maps = squad_features(examples, model.tokenizer, LENGTH, STRIDE, QUERY)
    names = [name for name in model.task_model.input if name in features]
    outputs = model.task_model.predict({n: features[n] for n in names}, verbose=0)
    outputs = {k: np.asarray(v) for k, v in outputs.items()}
    answers, odds = decode_spans(
        features,
        maps,
        outputs,
        head=model.head,
        max_answer_length=ANSWER,
        null_score=null_score,
    )
    index = range(len(examples))
    return [answers[i] for i in index], np.array([odds[i] for i in index])


@pytest.mark.parametrize("head", ["v2", "simple"])
def test_answers_are_the_evaluation_decoding(dev_questions, head, tmp_path):
    examples, questions, contexts = dev_questions
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    model = with_tokenizer(
        _reader(head),
        tokenizer,
        LENGTH,
        doc_stride=STRIDE,
        max_query_length=QUERY,
        max_answer_length=ANSWER,
    )
    assert isinstance(model, AlbertSpanTextModel) and model.head == head
    expected, odds = _evaluation_answers(model, examples)
    assert sum(a != "" for a in expected) >= 20  # random spans, mostly valid
    out = model({"question": questions, "context": contexts})
    got = [a.decode() for a in out["best_span"].numpy()]
    assert got == expected
    finite = np.isfinite(odds)
    assert np.array_equal(np.isfinite(out["null_odds"].numpy()), finite)
    assert max_abs_diff(out["null_odds"].numpy()[finite], odds[finite]) < 1e-4
    # The span's tokens are the context's: words [first, last] of the answer.
    starts, ends = out["start_token"].numpy(), out["end_token"].numpy()
    assert np.all((ends >= starts) & (ends - starts < ANSWER) | (starts == -1))
    # The threshold empties the answers whose no-answer odds are above it.
    threshold = float(np.median(odds[finite]))
    model.null_threshold = threshold
    answers = [a.decode() for a in model((questions, contexts))["answer"].numpy()]
    assert answers == [
        e if o <= threshold else "" for e, o in zip(expected, odds, strict=True)
    ]
    assert 0 < sum(a == "" for a in answers) < len(answers)
    # predict, .keras and a SavedModel served without albert_keras' Python.
    predicted = model.predict({"question": questions, "context": contexts}, verbose=0)
    assert [a.decode() for a in predicted["answer"]] == answers
    model.save(tmp_path / "qa.keras")
    restored = keras.saving.load_model(tmp_path / "qa.keras")
    assert isinstance(restored, AlbertSpanTextModel)
    assert restored.null_threshold == threshold
    back = restored((questions, contexts))
    assert [a.decode() for a in back["answer"].numpy()] == answers
    model.export(str(tmp_path / "serving"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "serving"))
    served = loaded.serve(tf.constant(questions), tf.constant(contexts))
    assert [a.decode() for a in served["answer"].numpy()] == answers
    assert max_abs_diff(served["score"], out["score"]) < 1e-5


def test_span_adjusted_null_odds_are_the_evaluation_ones(dev_questions, tmp_path):
    examples, questions, contexts = dev_questions
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    options = dict(doc_stride=STRIDE, max_query_length=QUERY, max_answer_length=ANSWER)
    reader = _reader("v2")
    official = with_tokenizer(reader, tokenizer, LENGTH, **options)
    model = with_tokenizer(
        reader, tokenizer, LENGTH, null_score="span_adjusted", **options
    )
    expected, odds = _evaluation_answers(model, examples, "span_adjusted")
    out = model((questions, contexts))
    assert [a.decode() for a in out["best_span"].numpy()] == expected
    finite = np.isfinite(odds)
    assert 0 < finite.sum() and np.array_equal(np.isfinite(out["null_odds"]), finite)
    assert max_abs_diff(out["null_odds"].numpy()[finite], odds[finite]) < 1e-4
    # The answer-class logit minus the best span's log probability.
    cls = official((questions, contexts))["null_odds"].numpy()
    adjusted = cls[finite] - out["score"].numpy()[finite]
    assert max_abs_diff(out["null_odds"].numpy()[finite], adjusted) < 1e-5
    assert max_abs_diff(cls[finite], odds[finite]) > 0.1
    model.save(tmp_path / "qa.keras")
    assert keras.saving.load_model(tmp_path / "qa.keras").null_score == "span_adjusted"
    with pytest.raises(ValueError, match="Unknown null_score 'spans'. Allowed"):
        AlbertSpanTextModel(reader, tokenizer, LENGTH, null_score="spans")


def test_odd_contexts_and_errors():
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    model = AlbertSpanTextModel(
        _reader("v2"), tokenizer, LENGTH, doc_stride=STRIDE, max_query_length=QUERY
    )
    out = model(
        (
            ["Who?", "Where did Emma go?", ""],
            ["", "Emma\twent\u202fto  Highbury\n\nyesterday.", "   "],
        )
    )
    # No context: no window, no span, no answer.
    assert out["answer"].numpy()[0] == b"" and out["start_token"].numpy()[0] == -1
    assert np.isinf(out["null_odds"].numpy()[0])
    assert out["answer"].numpy()[2] == b""
    # Words are whitespace words (tabs, U+202F, newlines), joined by one space.
    span = out["best_span"].numpy()[1].decode()
    assert span and span in "Emma went to Highbury yesterday."
    with pytest.raises(ValueError, match="Missing: \\['context'\\]"):
        model({"question": ["Who?"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="one context per"):
        model((["a", "b"], ["c"]))
    classifier = AlbertClassifier(AlbertBackbone(micro_config(vocab_size=8000)), 2)
    with pytest.raises(ValueError, match="reads the outputs of AlbertSquadV2"):
        AlbertSpanTextModel(classifier, tokenizer, LENGTH)


# --- bounded serving (issue 34) ---------------------------------------------
OUTPUTS = ("answer", "best_span", "start_token", "end_token")


def _qa_model(head="simple", **options):
    tokenizer = AlbertTokenizer(SPM_MODEL_PATH)
    return AlbertSpanTextModel(
        _reader(head),
        tokenizer,
        LENGTH,
        doc_stride=STRIDE,
        max_query_length=QUERY,
        max_answer_length=ANSWER,
        **options,
    )


def _same_answers(got, expected, rows=slice(None)):
    for key in OUTPUTS:
        assert got[key].numpy()[rows].tolist() == expected[key].numpy().tolist(), key
    for key in ("score", "null_odds"):
        assert max_abs_diff(got[key].numpy()[rows], expected[key]) < 1e-5, key


def _one_token_words(tokenizer, count):
    """`count` words of the embedded corpus that are one token each."""
    words = " ".join(read_paragraphs(count // 4)).lower().split()
    lengths = tokenizer(words).row_lengths().numpy()
    words = [w for w, n in zip(words, lengths, strict=True) if n == 1]
    assert len(words) >= count
    return words[:count]


def test_empty_contexts_and_questions_answer_nothing():
    model = _qa_model("v2")
    questions = ["Who came?", "Where?", "", " \t"]
    contexts = ["", " \n\t\u202f ", "Emma came home.", "Emma came home."]
    graph = tf.function(lambda q, c: model((q, c)))
    for out in (
        model((questions, contexts)),
        graph(tf.constant(questions), tf.constant(contexts)),
        graph(tf.constant(questions[:1]), tf.constant(contexts[:1])),
    ):
        rows = len(out["answer"])
        assert out["answer"].numpy().tolist() == [b""] * rows
        assert out["best_span"].numpy().tolist() == [b""] * rows
        assert out["start_token"].numpy().tolist() == [-1] * rows
        assert out["end_token"].numpy().tolist() == [-1] * rows
        assert np.all(np.isposinf(out["null_odds"])) and np.all(
            np.isneginf(out["score"])
        )
        assert not np.any(out["truncated"])
    assert model((tf.constant([], tf.string),) * 2)["answer"].shape == (0,)


def test_a_mixed_batch_answers_each_row_as_alone(dev_questions):
    _, questions, contexts = dev_questions
    model = _qa_model()
    alone = model(([questions[0]], [contexts[0]]))
    assert alone["best_span"].numpy()[0]
    mixed = model((["Who?", questions[0], ""], ["", contexts[0], contexts[0]]))
    _same_answers(mixed, alone, rows=slice(1, 2))
    assert mixed["answer"].numpy().tolist()[::2] == [b"", b""]


def test_max_windows_cuts_the_context_and_says_so():
    model = _qa_model(max_windows=3)
    question = "Who came home with her father?"
    words = _one_token_words(model.tokenizer, 400)
    capacity = model.packer.window_capacity(
        model.tokenizer([question]).row_lengths(), 3
    )
    capacity = int(capacity[0])  # 48 - 3 - 7 + 2 * 16
    cut = " ".join(words[:capacity])
    long = " ".join(words)  # 400 words: more than the 80 the split keeps
    for context in (long, " ".join(words[: capacity + 1])):
        out = model(([question, question], [context, cut]))
        assert out["truncated"].numpy().tolist() == [True, False]
        _same_answers(out, model(([question], [cut])), rows=slice(0, 1))
        assert out["best_span"].numpy()[0] and out["end_token"].numpy()[0] < capacity
    windows, _ = model.pack(([question], [long]))
    assert windows["token_ids"].shape[0] == 3
    # All the windows without the cut; words of several tokens are cut too.
    whole = _qa_model(max_windows=100)
    assert whole.pack(([question], [long]))[0]["token_ids"].shape[0] > 3
    assert not whole(([question], [long]))["truncated"].numpy()[0]
    text = " ".join(read_paragraphs(40)).split()[:70]  # 70 words < 80, 86 tokens
    out = model(([question], [" ".join(text)]))
    assert out["truncated"].numpy()[0]
    assert model.pack(([question], [" ".join(text)]))[0]["token_ids"].shape[0] == 3


def test_max_windows_is_in_the_config(tmp_path):
    model = _qa_model(max_windows=5)
    config = model.get_config()
    assert config["max_windows"] == 5
    assert AlbertSpanTextModel.from_config(config).max_windows == 5
    model.save(tmp_path / "qa.keras")
    restored = keras.saving.load_model(tmp_path / "qa.keras")
    assert restored.max_windows == 5
    context = " ".join(["Emma came home."] * 100)
    _same_answers(restored((["Who?"], [context])), model((["Who?"], [context])))
    assert restored((["Who?"], [context]))["truncated"].numpy()[0]
    assert _qa_model().max_windows == 64
    for bad in (0, "3", None):
        with pytest.raises(ValueError, match="`max_windows` must be a positive"):
            _qa_model(max_windows=bad)
