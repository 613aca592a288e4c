"""Cloze questions from text: offsets, unanswerables, seeds, the CLI, the warm-up."""

import json
import os
import random
import re

import numpy as np
import pytest
from albert_test_case import micro_config, shared_data_dir

from albert_keras.cli import main
from albert_keras.finetuning.cloze_question_generator import (
    _INTERREGNA,
    _OPPOSITES,
    _PUNCTUATION,
    ClozeQuestionGenerator,
    answer_candidates,
    change_fact,
)
from albert_keras.finetuning.task_reader import read_squad_file
from albert_keras.pretraining.text_documents import read_documents

AUSTEN = os.path.join(shared_data_dir(), "pretrain", "en_austen.txt")
NEWS = os.path.join(shared_data_dir(), "pretrain", "en_news.txt")


def _questions(squad):
    return [
        (p["context"], qa)
        for article in squad["data"]
        for p in article["paragraphs"]
        for qa in p["qas"]
    ]


def test_question_forms_by_hand():
    sentence = "In 1811 Emma met Mr. Knightley at Donwell Abbey."
    passage = sentence + " " + " ".join(["More words follow here."] * 3)
    start = sentence.index("Donwell Abbey")
    for fronted, pattern in ((0.0, r"^[A-Z].* at what\?$"), (1.0, r"^What .* at\?$")):
        generator = ClozeQuestionGenerator(
            questions_per_passage=30,
            unanswerable=0,
            min_words=5,
            fronted=fronted,
            drop_word=0,
        )
        squad = generator.squad([[passage]])
        questions = [
            qa
            for c, qa in _questions(squad)
            if qa["answers"][0]["answer_start"] == start
        ]
        assert questions, squad
        # Words before the answer, then after (none here), around the
        # question word; the answer's own words never appear.
        for qa in questions:
            assert "Donwell" not in qa["question"]
            assert re.match(pattern, qa["question"]), qa["question"]


def test_answer_candidates_by_hand():
    sentence = (
        "On 4 July 1815 the Duke of Wellington paid 3,000 pounds to Lady Catherine."
    )
    found = [(sentence[s:e], w) for s, e, w in answer_candidates(sentence)]
    assert found == [
        ("4", "how many"),
        ("July", "when"),
        ("1815", "when"),
        ("Duke of Wellington", "what"),
        ("3,000", "how many"),
        ("Lady Catherine", "what"),
    ]
    # The first word, pronouns and titles are not names.
    assert answer_candidates("Emma said that He and Mr went out.") == []


def test_questions_on_real_text():
    documents = read_documents(NEWS)[:60]
    generator = ClozeQuestionGenerator(seed=3)
    squad = generator.squad(documents)
    questions = _questions(squad)
    assert len(questions) > 300
    impossible = [qa for _, qa in questions if qa["is_impossible"]]
    first = [qa["question"].split()[0].lower() for _, qa in questions]
    share = sum(w in ("what", "when", "how") for w in first) / len(first)
    assert 0.4 < share < 0.65, share
    assert 0.25 < len(impossible) / len(questions) < 0.40
    for context, qa in questions:
        words = len(context.split())
        assert 50 <= words <= 200, words
        assert qa["question"].endswith("?")
        assert re.search(r"\b(what|when|how many)\b", qa["question"].lower())
        if qa["is_impossible"]:
            assert qa["answers"] == []
            continue
        (answer,) = qa["answers"]
        start = answer["answer_start"]
        # The answer is the text at its offset, and the question is not a
        # copy of the passage: the answer itself is never in the question.
        assert context[start : start + len(answer["text"])] == answer["text"]


def test_the_squad_reader_keeps_every_question(tmp_path):
    """No "answer not in context" skips: fine-tuning uses all of them."""
    squad = ClozeQuestionGenerator(seed=3).squad(read_documents(NEWS)[:60])
    path = str(tmp_path / "cloze.json")
    with open(path, "w") as f:
        json.dump(squad, f)
    examples, _, report = read_squad_file(path, training=True)
    assert len(examples) == len(_questions(squad))
    assert report.num_skipped == 0, report.summary()


def _disfluent_forms(base):
    """Regexes of `base` restarted ("... <interregnum> base") or corrected."""
    words = base.split()
    forms = []
    for interregnum in _INTERREGNA:
        inter = re.escape(interregnum)
        forms.append(rf"^\S.* {inter} {re.escape(base)}$")
        for i in range(1, len(words)):
            before, after = " ".join(words[:i]), " ".join(words[i:])
            forms.append(rf"^{re.escape(before)} [A-Za-z]+ {inter} {re.escape(after)}$")
    return forms


def test_disfluent_questions_by_hand():
    """Each question is its fluent form with a restart or a corrected word."""
    passage = (
        "At dawn Emma walked home. The party of 12 met at noon. "
        "More words follow here. More words follow here."
    )
    # The fluent questions (fronted=0, drop_word=0, and no more than 4 words
    # before or 3 after an answer: every word is kept).
    fluent = {
        "Emma": "At dawn what walked home",
        "12": "The party of how many met at noon",
    }
    generator = ClozeQuestionGenerator(
        questions_per_passage=200,
        unanswerable=0,
        min_words=30,  # one passage of three sentences
        fronted=0,
        drop_word=0,
        disfluent=1.0,
        seed=5,
    )
    kinds = {"restart": 0, "correction": 0}
    for _, qa in _questions(generator.squad([[passage]])):
        question = qa["question"][:-1]
        base = fluent[qa["answers"][0]["text"]]
        # Case aside: the question's first letter is made a capital.
        forms = _disfluent_forms(base)
        matches = [f for f in forms if re.match(f, question, re.IGNORECASE)]
        assert matches, (question, base)
        restart = any(f.startswith("^\\S") for f in matches)
        kinds["restart" if restart else "correction"] += 1
    assert kinds["restart"] > 50 and kinds["correction"] > 50, kinds


def test_disfluent_share_and_offsets_on_real_text():
    documents = read_documents(NEWS)[:60]
    plain = ClozeQuestionGenerator(seed=3).squad(documents)
    mixed = ClozeQuestionGenerator(disfluent=0.5, seed=3).squad(documents)
    inter = re.compile(r"\b(no sorry|I mean|or rather|scratch that|make that|oops)\b")

    def share(squad):
        questions = [qa["question"] for _, qa in _questions(squad)]
        return sum(bool(inter.search(q)) for q in questions) / len(questions)

    # Half the questions disfluent, 6 of the 20 interregna counted here.
    assert share(plain) < 0.02 and 0.1 < share(mixed) < 0.22, (
        share(plain),
        share(mixed),
    )
    for context, qa in _questions(mixed):
        for answer in qa["answers"]:
            start = answer["answer_start"]
            assert context[start : start + len(answer["text"])] == answer["text"]


def test_same_seed_same_questions_other_seed_others():
    documents = read_documents(AUSTEN)[:5]
    a = ClozeQuestionGenerator(seed=1).squad(documents)
    assert a == ClozeQuestionGenerator(seed=1).squad(documents)
    assert a != ClozeQuestionGenerator(seed=2).squad(documents)


def test_bad_settings_and_empty_text(tmp_path):
    with pytest.raises(ValueError, match="unanswerable"):
        ClozeQuestionGenerator(unanswerable=1.5)
    with pytest.raises(ValueError, match="fronted"):
        ClozeQuestionGenerator(fronted=-0.1)
    with pytest.raises(ValueError, match="disfluent=2"):
        ClozeQuestionGenerator(disfluent=2)
    with pytest.raises(ValueError, match="min_words"):
        ClozeQuestionGenerator(min_words=100, max_words=50)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="No documents"):
        ClozeQuestionGenerator().write([str(empty)], str(tmp_path / "o.json"))
    short = tmp_path / "short.txt"
    short.write_text("just a few words here\n")
    with pytest.raises(ValueError, match="No cloze question"):
        ClozeQuestionGenerator().write([str(short)], str(tmp_path / "o.json"))


def test_cli_writes_train_and_dev_from_separate_documents(tmp_path, capsys):
    train, dev = str(tmp_path / "train.json"), str(tmp_path / "dev.json")
    args = ["cloze-qa", "--input", AUSTEN, "--output", train]
    dev_args = ["--dev-output", dev, "--dev-documents", "20", "--disfluent", "1"]
    assert main([*args, *dev_args]) == 0
    out = capsys.readouterr().out
    assert "unanswerable" in out and "from 223 documents" in out
    with open(train) as f:
        train_contexts = {c for c, _ in _questions(json.load(f))}
    with open(dev) as f:
        dev_contexts = {c for c, _ in _questions(json.load(f))}
    assert len(dev_contexts) > 50 and not train_contexts & dev_contexts
    with open(dev) as f:
        questions = [qa["question"] for _, qa in _questions(json.load(f))]
    # --disfluent reaches the generator: an interregnum in most questions.
    said = [q for q in questions if re.search(r"\b(no|sorry|mean|rather)\b", q)]
    assert len(said) > 0.3 * len(questions), questions[:5]
    assert main(["cloze-qa", "--input", "/no/such/*.txt", "--output", train]) == 2
    assert "No input file matches '/no/such/*.txt'" in capsys.readouterr().err


def test_finetuning_reuses_a_whole_squad_model(tmp_path):
    """`--init` a fine-tuned SQuAD model: its head comes along too.

    Another class of model gives nothing here (its backbone is loaded elsewhere).
    """
    import keras

    from albert_keras import AlbertBackbone, AlbertPretrainer, AlbertSquadV2
    from albert_keras.finetuning.finetune_run import reuse_task_head

    config = micro_config()
    keras.utils.set_random_seed(1)
    warmed = AlbertSquadV2(AlbertBackbone(config))
    warmed.save(tmp_path / "warmed.keras")
    keras.utils.set_random_seed(2)
    fresh = AlbertSquadV2(AlbertBackbone(config))
    loaded = keras.saving.load_model(tmp_path / "warmed.keras", compile=False)
    assert "head included" in reuse_task_head(fresh, loaded)
    for a, b in zip(fresh.get_weights(), warmed.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    # Another class: nothing copied here (the backbone is loaded elsewhere).
    AlbertPretrainer(AlbertBackbone(config)).save(tmp_path / "pre.keras")
    before = [w.copy() for w in fresh.get_weights()]
    loaded = keras.saving.load_model(tmp_path / "pre.keras", compile=False)
    assert "backbone reused" in reuse_task_head(fresh, loaded)
    for a, b in zip(fresh.get_weights(), before, strict=True):
        np.testing.assert_array_equal(a, b)


def test_change_fact_by_hand():
    rng = random.Random(0)
    sentence = "Emma was born in 1811 at Hartfield, near Highbury."
    passage = sentence + " She came first in the race."
    answer = sentence.index("1811"), sentence.index("1811") + 4
    words = ["When", "Emma", "was", "born", "at", "Hartfield,", "near"]
    # Nothing to swap in: only the negation applies.
    assert change_fact(words, sentence, *answer, passage, [], rng) == [
        "When", "Emma", "was", "not", "born", "at", "Hartfield,", "near",
    ]  # fmt: skip
    # A name of the passage is not swapped in; one from elsewhere is, with
    # the comma kept; "Emma" opens the sentence, so it is no candidate (see
    # `answer_candidates`). The negation is the other change drawn.
    elsewhere = [("Highbury", "what"), ("Donwell", "what"), ("1815", "when")]
    made = {
        tuple(change_fact(words, sentence, *answer, passage, elsewhere, rng))
        for _ in range(40)
    }
    assert made == {
        ("When", "Emma", "was", "not", "born", "at", "Hartfield,", "near"),
        ("When", "Emma", "was", "born", "at", "Donwell,", "near"),
    }
    # A sentence with a negation is not negated; an opposite the passage
    # does not use replaces "first", capitals kept.
    negated = "Emma did not come first in 1811."
    start = negated.index("1811")
    words = ["First", "in", "when", "Emma", "did", "not", "come"]
    assert change_fact(words, negated, start, start + 4, negated, [], rng) == [
        "Last", "in", "when", "Emma", "did", "not", "come",
    ]  # fmt: skip
    assert (
        change_fact(words, negated, start, start + 4, negated + " At last.", [], rng)
        is None
    )


def test_changed_facts_on_real_text():
    """On news text each change is one swap, one "not" or one opposite."""
    rng = random.Random(4)
    generator = ClozeQuestionGenerator(seed=4)
    kinds = {"swap": 0, "negate": 0, "opposite": 0}
    for document in read_documents(NEWS)[:40]:
        passages = generator.passages(document)
        found = [generator._candidates(p) for p in passages]
        elsewhere = generator.document_facts(found)
        for passage, candidates in zip(passages, found, strict=True):
            for sentence, _, start, end, word in candidates:
                words = generator._question_words(sentence, start, end, word, rng)
                changed = change_fact(
                    words, sentence, start, end, passage, elsewhere, rng
                )
                if changed is None:
                    continue
                # What changed: the words between the common head and tail.
                head = 0
                while head < len(words) and words[head] == changed[head]:
                    head += 1
                tail = 0
                while (
                    tail < len(words) - head and words[-1 - tail] == changed[-1 - tail]
                ):
                    tail += 1
                old = " ".join(words[head : len(words) - tail]).strip(_PUNCTUATION)
                new = " ".join(changed[head : len(changed) - tail]).strip(_PUNCTUATION)
                if not old and new == "not":
                    kinds["negate"] += 1
                elif _OPPOSITES.get(old.lower()) == new.lower():
                    assert new.lower() not in passage.lower().split(), new
                    kinds["opposite"] += 1
                else:
                    new = re.sub(r"'s$", "", new)
                    assert old and new and new not in passage, (old, new, passage)
                    assert answer_candidates(sentence), sentence
                    kinds["swap"] += 1
    assert all(n > 10 for n in kinds.values()), kinds


def _overlap(question, context):
    """Share of a question's words (question words aside) in its context."""
    words = re.findall(r"[a-z0-9']+", question.lower())
    words = [w for w in words if w not in {"what", "when", "how", "many"}]
    context = set(re.findall(r"[a-z0-9']+", context.lower()))
    return sum(w in context for w in words) / max(len(words), 1)


def test_plausible_unanswerable_questions_match_their_passage(tmp_path, capsys):
    documents = read_documents(NEWS)[:60]

    def unanswerable(squad):
        return [(c, qa) for c, qa in _questions(squad) if qa["is_impossible"]]

    far = unanswerable(ClozeQuestionGenerator(seed=5).squad(documents))
    near = unanswerable(ClozeQuestionGenerator(seed=5, plausible=1.0).squad(documents))
    # From another passage the words mostly miss the context; with a fact
    # changed they match it but for the change.
    # (About a fifth of the questions have no fact that can be changed and
    # come from another passage after all.)
    assert np.mean([_overlap(qa["question"], c) > 0.6 for c, qa in far]) < 0.15
    assert np.mean([_overlap(qa["question"], c) > 0.6 for c, qa in near]) > 0.65
    assert all(qa["answers"] == [] for _, qa in near)
    assert len(near) > 0.8 * len(far)
    with pytest.raises(ValueError, match="plausible=1.5"):
        ClozeQuestionGenerator(plausible=1.5)
    # The CLI flag reaches the generator.
    text, out = tmp_path / "news.txt", str(tmp_path / "q.json")
    text.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
    args = ["cloze-qa", "--input", str(text), "--output", out, "--unanswerable", "1"]
    assert main([*args, "--plausible", "1", "--seed", "5"]) == 0
    with open(out) as f:
        questions = _questions(json.load(f))
    # (A document of one passage has answerable questions only.)
    assert np.mean([qa["is_impossible"] for _, qa in questions]) > 0.95
    assert np.mean([_overlap(qa["question"], c) > 0.6 for c, qa in questions]) > 0.65
