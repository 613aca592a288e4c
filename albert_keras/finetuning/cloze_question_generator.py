"""`ClozeQuestionGenerator`: SQuAD 2.0-format cloze questions from plain text.

A small model pretrained on a few megabytes of text does not learn from a few
thousand labelled questions where an answer span lies (on disfl_qa it stays
at the "always no answer" score). A warm-up on cloze questions made from any
text teaches the span head to match a question to the context and to mark
the answer first (the idea of Lewis et al. 2019, "Unsupervised Question
Answering by Cloze Translation", and of span-selection pretraining): take a
sentence of a passage, replace a name, year or number in it with a question
word, keep a few words either side of it as the question, and the replaced
words in the passage are the answer. A question made from another passage
of the same document, whose answer does not occur in this one, is
unanswerable (SQuAD 2.0's `is_impossible`). Such a question is easy to
tell apart: its words are not in the passage. SQuAD 2.0's unanswerable
questions are not (Rajpurkar et al. 2018): they are written against the
passage, with an entity swapped, a negation or an antonym, so they match it
word for word but for the one word that makes them unanswerable. Optionally
(`plausible`) unanswerable questions are made that way: a question from a
sentence of this passage with one fact changed. Optionally a question is made
disfluent, as spoken questions are (Disfl-QA, Gupta et al. 2021): it starts
another question and breaks off, or says a wrong word and corrects it, so a
model learns to answer the repair, not the slip.

The output is SQuAD v2.0 JSON, so `albert-keras finetune --task squad` trains
on it unchanged; then fine-tune on the real questions with `--init` the
warmed-up model.
"""

from __future__ import annotations

import json
import random
import re

from albert_keras.pretraining.text_documents import read_documents, split_sentences

_NUMBER = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
# Capitalized words, possibly joined by "of", "the", "de", "and".
_NAME = re.compile(
    r"\b[A-Z][a-zA-Z'\-]+(?:\s+(?:of|the|de|and)\s+[A-Z][a-zA-Z'\-]+"
    r"|\s+[A-Z][a-zA-Z'\-]+)*"
)
# Capitalized function words and titles are not answers.
_NOT_NAMES = frozenset(
    "A An And As At But For He Her His I If In It Mr Mrs Miss Ms Dr Sir No Oh On "
    "Our She So Then There They This That The Their To We What When Who You Yes".split()
)
# Words a speaker says between a slip and its repair ("interregnum").
_INTERREGNA = tuple(
    "no|no sorry|sorry|I mean|or rather|rather|um|uh|er|no no|no wait|make that|"
    "actually|oops|scratch that|or uh|I meant|wait|no I mean|sorry I mean".split("|")
)
# Auxiliaries a negation follows ("did" -> "did not").
_AUXILIARIES = frozenset(
    "is was are were did does do has had have can could will would should may "
    "might must".split()
)
_NEGATIONS = re.compile(r"\b(?:not|never|no|nor|cannot)\b|n't", re.IGNORECASE)
# Words whose opposite changes the fact a question asks about.
_OPPOSITES = dict(
    pair
    for a, b in (
        ("first", "last"),
        ("before", "after"),
        ("largest", "smallest"),
        ("most", "least"),
        ("more", "less"),
        ("higher", "lower"),
        ("earlier", "later"),
        ("early", "late"),
        ("north", "south"),
        ("east", "west"),
        ("won", "lost"),
        ("increased", "decreased"),
        ("rose", "fell"),
        ("older", "younger"),
        ("oldest", "youngest"),
        ("biggest", "smallest"),
        ("best", "worst"),
        ("above", "below"),
        ("inside", "outside"),
        ("accepted", "rejected"),
        ("allowed", "forbidden"),
        ("began", "ended"),
        ("opened", "closed"),
    )
    for pair in ((a, b), (b, a))
)
_MONTHS = frozenset(
    "January February March April May June July August September October "
    "November December".split()
)


def _question_word(answer):
    if answer.isdigit() and len(answer) == 4 and 1000 <= int(answer) <= 2099:
        return "when"
    if answer[0].isdigit():
        return "how many"
    return "when" if answer.split()[0] in _MONTHS else "what"


def answer_candidates(sentence: str) -> list[tuple[int, int, str]]:
    """Names, years and numbers in a sentence: `(start, end, question word)`.

    Character offsets into `sentence`. A capitalized word opening the sentence
    is skipped (it is capitalized anyway), as are pronouns and titles.

    Example:
    >>> answer_candidates("In 1811 Emma met Mr. Knightley at Donwell Abbey.")
    [(3, 7, 'when'), (8, 12, 'what'), (21, 30, 'what'), (34, 47, 'what')]
    """
    spans = [(m.start(), m.end()) for m in _NUMBER.finditer(sentence)]
    for m in _NAME.finditer(sentence):
        words = m.group(0).split()
        if m.start() == 0 or words[0] in _NOT_NAMES:
            continue
        spans.append((m.start(), m.end()))
    return [(s, e, _question_word(sentence[s:e])) for s, e in sorted(spans)]


_PUNCTUATION = ".,;:!?\"'()[]"


def _bare(word):
    return word.strip(_PUNCTUATION)


def _entity(text):
    """A name or number without punctuation or a possessive "'s"."""
    return re.sub(r"'s$", "", _bare(text))


def change_fact(words, sentence, start, end, passage, elsewhere, rng):
    """Question words about `sentence` made unanswerable from `passage`, or None.

    One of the changes SQuAD 2.0's writers made to answerable questions
    (Rajpurkar et al. 2018), drawn among those that apply:

    - entity swap: a name, year or number of the question (other than the
      answer at `sentence[start:end]`) becomes one of the same kind
      (`elsewhere`: `(text, question word)` pairs) that `passage` does not
      contain, a possessive "'s" aside, and that shares no word with the
      one it replaces;
    - negation: "not" after the first auxiliary ("was", "did", ...), where
      the sentence has no negation;
    - antonym: a word such as "first", "before" or "won" becomes its
      opposite, where `passage` does not use the opposite.

    Args:
        words: list of str. The question's words (question word included).
        sentence: str. The sentence the question asks about.
        start, end: int. The answer's character span in `sentence`.
        passage: str. The context the question goes with.
        elsewhere: list of `(text, question word)`. Names, years and numbers
            to swap in.
        rng: `random.Random`.

    Returns:
        The changed words (a new list), or None where no change applies.

    Example:
    >>> import random
    >>> passage = "In 1811 Emma met Knightley at Donwell."
    >>> words = ["Who", "in", "1811", "met", "Knightley"]
    >>> change_fact(words, passage, 8, 12, passage, [("1815", "when")],
    ...             random.Random(0))
    ['Who', 'in', '1815', 'met', 'Knightley']
    """
    lowered = re.findall(r"[a-z']+", passage.lower())
    changes = []
    bare = [_bare(w) for w in words]
    for s, e, kind in answer_candidates(sentence):
        if (s, e) == (start, end):
            continue
        old = sentence[s:e].split()
        old_bare = [_bare(o) for o in old]
        spots = [i for i in range(len(words)) if bare[i : i + len(old)] == old_bare]
        # Not in the passage, and no word in common ("Rice" -> "Mary Rice").
        old_entities = {_entity(w) for w in old}
        swaps = [
            t
            for t, k in elsewhere
            if k == kind
            and _entity(t) not in passage
            and not {_entity(w) for w in t.split()} & old_entities
        ]
        if spots and swaps:
            changes.append(("swap", spots[0], len(old), swaps))
    if not _NEGATIONS.search(sentence):
        auxiliaries = [i for i, w in enumerate(bare) if w.lower() in _AUXILIARIES]
        if auxiliaries:
            changes.append(("negate", auxiliaries[0]))
    for i, w in enumerate(bare):
        opposite = _OPPOSITES.get(w.lower())
        if opposite and opposite not in lowered:
            changes.append(("opposite", i, opposite))
            break
    if not changes:
        return None
    change = rng.choice(changes)
    words = list(words)
    if change[0] == "swap":
        _, i, n, swaps = change
        last = words[i + n - 1]
        tail = last[len(last.rstrip(_PUNCTUATION)) :]
        words[i : i + n] = (rng.choice(swaps) + tail).split()
    elif change[0] == "negate":
        words.insert(change[1] + 1, "not")
    else:
        _, i, opposite = change
        if words[i][:1].isupper():
            opposite = opposite.capitalize()
        words[i] = words[i].replace(bare[i], opposite, 1)
    return words


class ClozeQuestionGenerator:
    """Makes SQuAD 2.0 cloze questions from documents of plain text.

    Passages are runs of consecutive sentences of one document, between
    `min_words / 2` and `max_words` words (at least `min_words` where the
    document allows). For each passage, `questions_per_passage` questions:
    a sentence of the passage with one answer candidate (`answer_candidates`)
    replaced by its question word ("what", "when", "how many"), cut to 4-12
    words before and 3-12 after it, each other word dropped with probability
    `drop_word`, the question word moved to the front with probability
    `fronted`; the answer is the replaced text at its offset in the passage.
    With probability `unanswerable`, the sentence comes from another passage
    of the same document instead, and the question is kept only if its answer
    text does not occur in this passage (`is_impossible`, no answers); or,
    with probability `plausible`, it comes from this passage with one fact
    changed (`change_fact`): another name, year or number of the question
    replaced by one of the same kind from elsewhere in the document that this
    passage does not contain, "not" after an auxiliary of a sentence without
    a negation, or a word such as "first" or "before" replaced by its opposite
    where the passage does not use the opposite.
    Seeded: the same documents and seed give the same questions.

    Args:
        questions_per_passage: int. Questions tried per passage.
        unanswerable: float. Share of unanswerable questions.
        plausible: float. Share of the unanswerable questions made from this
            passage with a fact changed instead of from another passage
            (where no fact of the question can be changed, from another
            passage after all).
        min_words, max_words: int. Passage length in words.
        drop_word: float. Probability of dropping each question word but the
            question word itself (questions are not copies of the passage).
        fronted: float. Probability of moving the question word to the front
            ("What did ... ?" as people ask, with no gap at the answer's
            place) instead of leaving it where the answer was.
        disfluent: float. Probability of making a question disfluent: half
            of them restart ("When was er what did ... ?": the first words
            of a question about another part of the passage, an interregnum
            such as "no sorry" or "I mean", then the question), half correct
            a word ("... in Paris no I mean London ...": a word of another
            sentence of the passage, an interregnum, then the right word).
            The answer stays that of the repaired question. A passage with
            no other sentence holding a name or number keeps its questions
            fluent.
        seed: int. Random seed.

    Example:
    >>> text = ("Emma Woodhouse lived at Hartfield in Surrey. She was 21 in 1815. "
    ...         "Her friend Harriet Smith lived at Highbury with Mrs. Goddard.")
    >>> generator = ClozeQuestionGenerator(min_words=10, unanswerable=0, seed=1)
    >>> squad = generator.squad([[text]])
    >>> qa = squad["data"][0]["paragraphs"][0]["qas"][0]
    >>> answer = qa["answers"][0]
    >>> text[answer["answer_start"]:][: len(answer["text"])] == answer["text"]
    True
    """

    def __init__(
        self,
        questions_per_passage: int = 3,
        unanswerable: float = 1 / 3,
        plausible: float = 0.0,
        min_words: int = 100,
        max_words: int = 200,
        drop_word: float = 0.1,
        fronted: float = 0.5,
        disfluent: float = 0.0,
        seed: int = 0,
    ):
        shares = (unanswerable, plausible, fronted, disfluent)
        if not (all(0 <= x <= 1 for x in shares) and 0 <= drop_word < 1):
            raise ValueError(
                "`unanswerable`, `plausible`, `fronted` and `disfluent` must be in "
                "[0, 1], `drop_word` in [0, 1). Received: "
                f"unanswerable={unanswerable}, plausible={plausible}, "
                f"fronted={fronted}, disfluent={disfluent}, drop_word={drop_word}"
            )
        if questions_per_passage < 1 or not 0 < min_words <= max_words:
            raise ValueError(
                "Need questions_per_passage >= 1 and 0 < min_words <= max_words. "
                f"Received: questions_per_passage={questions_per_passage}, "
                f"min_words={min_words}, max_words={max_words}"
            )
        self.questions_per_passage = questions_per_passage
        self.unanswerable = unanswerable
        self.plausible = plausible
        self.min_words = min_words
        self.max_words = max_words
        self.drop_word = drop_word
        self.fronted = fronted
        self.disfluent = disfluent
        self.seed = seed

    def passages(self, document: list[str]) -> list[str]:
        """A document's sentences packed into passages of the configured length.

        Consecutive sentences (`split_sentences` of each paragraph) are joined
        until the passage has `min_words`, never past `max_words`; a passage
        that stays under `min_words / 2` (the end of a document) and a sentence
        longer than `max_words` are left out.
        """
        sentences = [s for paragraph in document for s in split_sentences(paragraph)]
        passages, parts, words = [], [], 0
        for sentence in sentences + [None]:
            size = len(sentence.split()) if sentence else 0
            if (
                sentence is None
                or words + size > self.max_words
                or (words >= self.min_words)
            ):
                if parts and words >= self.min_words // 2:
                    passages.append(" ".join(parts))
                parts, words = [], 0
            if sentence is not None and size <= self.max_words:
                parts.append(sentence)
                words += size
        return passages

    def _question_words(self, sentence, start, end, word, rng):
        left = sentence[:start].split()[-rng.randint(4, 12) :]
        right = sentence[end:].rstrip(" .!?\"'").split()[: rng.randint(3, 12)]
        left = [w for w in left if rng.random() >= self.drop_word]
        right = [w for w in right if rng.random() >= self.drop_word]
        if rng.random() < self.fronted:
            # As real questions are asked: the question word first, then the
            # rest of the sentence, with no gap where the answer was.
            words = [word] + left + right
        else:
            words = left + [word] + right
        return words

    def _question(self, sentence, start, end, word, rng, pool, words=None):
        if words is None:
            words = self._question_words(sentence, start, end, word, rng)
        if self.disfluent and rng.random() < self.disfluent:
            words = self._disfluency(words, word, sentence, rng, pool)
        question = " ".join(words).strip(" ,;:")
        return question[:1].upper() + question[1:] + "?"

    def _disfluency(self, words, word, sentence, rng, pool):
        """`words` with a slip and its repair; the repaired question is `words`."""
        interregnum = rng.choice(_INTERREGNA).split()
        others = [c for c in pool if c[0] != sentence]
        if not others:
            return words
        other, _, start, end, other_word = rng.choice(others)
        if rng.random() < 0.5:
            # Restart: a question about something else, broken off.
            slip = self._question_words(other, start, end, other_word, rng)
            slip = slip[: rng.randint(min(2, len(slip)), min(5, len(slip)))]
            return slip + interregnum + words
        # Correction: a wrong word (from another sentence), then the right one.
        positions = [i for i, w in enumerate(words) if w != word and w.isalpha()]
        candidates = [w for w in other.split() if w.isalpha() and w not in words]
        if not positions or not candidates:
            return words
        i = rng.choice(positions)
        return words[:i] + [rng.choice(candidates)] + interregnum + words[i:]

    def _plausible(self, passage, candidates, elsewhere, rng):
        """A question from `passage` with a fact changed, or None.

        Returns the candidate it asks about and the changed question words.
        """
        if not candidates:
            return None
        candidate = rng.choice(candidates)
        sentence, _, start, end, word = candidate
        words = self._question_words(sentence, start, end, word, rng)
        changed = change_fact(words, sentence, start, end, passage, elsewhere, rng)
        return None if changed is None else (candidate, changed)

    @staticmethod
    def document_facts(candidates):
        """`(text, question word)` of every candidate of a document's passages.

        The names, years and numbers `change_fact` swaps in, sorted.
        """
        return sorted(
            {(c[0][c[2] : c[3]], c[4]) for found in candidates for c in found}
        )

    def _candidates(self, passage):
        found, position = [], 0
        for sentence in split_sentences(passage):
            offset = passage.find(sentence, position)
            if offset < 0:
                continue
            position = offset + len(sentence)
            for start, end, word in answer_candidates(sentence):
                found.append((sentence, offset, start, end, word))
        return found

    def squad(self, documents: list[list[str]], prefix: str = "cloze") -> dict:
        """SQuAD v2.0 JSON (`{"version", "data"}`) for documents of paragraphs.

        Args:
            documents: documents, each a list of paragraphs (as
                `read_documents` returns them).
            prefix: question ids are `{prefix}-{n}`.
        """
        rng = random.Random(self.seed)
        articles, count = [], 0
        for number, document in enumerate(documents):
            passages = self.passages(document)
            candidates = [self._candidates(p) for p in passages]
            elsewhere = self.document_facts(candidates)
            paragraphs = []
            for index, passage in enumerate(passages):
                qas = []
                others = [j for j in range(len(passages)) if j != index]
                for _ in range(self.questions_per_passage):
                    words = None
                    if others and rng.random() < self.unanswerable:
                        if self.plausible and rng.random() < self.plausible:
                            made = self._plausible(
                                passage, candidates[index], elsewhere, rng
                            )
                            if made is not None:
                                (sentence, offset, start, end, word), words = made
                        if words is None:
                            pool = candidates[rng.choice(others)]
                            pool = [c for c in pool if c[0][c[2] : c[3]] not in passage]
                        impossible = True
                    else:
                        pool, impossible = candidates[index], False
                    if words is None:
                        if not pool:
                            continue
                        sentence, offset, start, end, word = rng.choice(pool)
                    answer = sentence[start:end]
                    qa = {
                        "id": f"{prefix}-{count}",
                        "question": self._question(
                            sentence, start, end, word, rng, candidates[index], words
                        ),
                        "answers": []
                        if impossible
                        else [{"text": answer, "answer_start": offset + start}],
                        "is_impossible": impossible,
                    }
                    qas.append(qa)
                    count += 1
                if qas:
                    paragraphs.append({"context": passage, "qas": qas})
            if paragraphs:
                articles.append(
                    {"title": f"document {number}", "paragraphs": paragraphs}
                )
        return {"version": "v2.0", "data": articles}

    def write(
        self,
        input_files: list[str],
        output: str,
        dev_output: str | None = None,
        dev_documents: int = 0,
    ) -> dict:
        """Reads text files, writes SQuAD JSON; returns question counts.

        Args:
            input_files: UTF-8 text files, a paragraph per line, a blank line
                between documents (the pretraining input format).
            output: the training JSON.
            dev_output: a second JSON made from `dev_documents` documents
                (drawn at random, seeded) that the training file does not use.
            dev_documents: how many documents go to `dev_output`.

        Raises:
            ValueError: unreadable files, no documents, or no question made.
        """
        documents = [d for path in input_files for d in read_documents(path)]
        if not documents:
            raise ValueError(f"No documents in {input_files}: the files are empty.")
        order = list(range(len(documents)))
        random.Random(self.seed).shuffle(order)
        dev_documents = dev_documents if dev_output else 0
        if dev_documents >= len(documents):
            raise ValueError(
                f"dev_documents={dev_documents} leaves no training documents of "
                f"{len(documents)}: pass fewer."
            )
        splits = {output: sorted(order[dev_documents:])}
        if dev_output:
            splits[dev_output] = sorted(order[:dev_documents])
        counts = {}
        for path, indices in splits.items():
            squad = self.squad([documents[i] for i in indices])
            qas = [
                qa for a in squad["data"] for p in a["paragraphs"] for qa in p["qas"]
            ]
            if not qas:
                raise ValueError(
                    f"No cloze question could be made for {path!r}: the text has no "
                    "passages of at least min_words / 2 words with a name or number."
                )
            with open(path, "w", encoding="utf-8") as f:
                json.dump(squad, f, ensure_ascii=False)
            counts[path] = {
                "documents": len(indices),
                "questions": len(qas),
                "unanswerable": sum(qa["is_impossible"] for qa in qas),
            }
        return counts
