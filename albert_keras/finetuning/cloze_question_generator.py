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
unanswerable (SQuAD 2.0's `is_impossible`). Optionally a question is made
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
    text does not occur in this passage (`is_impossible`, no answers).
    Seeded: the same documents and seed give the same questions.

    Args:
        questions_per_passage: int. Questions tried per passage.
        unanswerable: float. Share of unanswerable questions.
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
        min_words: int = 100,
        max_words: int = 200,
        drop_word: float = 0.1,
        fronted: float = 0.5,
        disfluent: float = 0.0,
        seed: int = 0,
    ):
        shares = (unanswerable, fronted, disfluent)
        if not (all(0 <= x <= 1 for x in shares) and 0 <= drop_word < 1):
            raise ValueError(
                "`unanswerable`, `fronted` and `disfluent` must be in [0, 1], "
                f"`drop_word` in [0, 1). Received: unanswerable={unanswerable}, "
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

    def _question(self, sentence, start, end, word, rng, pool):
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
            paragraphs = []
            for index, passage in enumerate(passages):
                qas = []
                others = [j for j in range(len(passages)) if j != index]
                for _ in range(self.questions_per_passage):
                    if others and rng.random() < self.unanswerable:
                        pool = candidates[rng.choice(others)]
                        pool = [c for c in pool if c[0][c[2] : c[3]] not in passage]
                        impossible = True
                    else:
                        pool, impossible = candidates[index], False
                    if not pool:
                        continue
                    sentence, offset, start, end, word = rng.choice(pool)
                    answer = sentence[start:end]
                    qa = {
                        "id": f"{prefix}-{count}",
                        "question": self._question(
                            sentence, start, end, word, rng, candidates[index]
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
