"""`albert-keras cloze-qa`: SQuAD 2.0 cloze questions from plain text files.

albert-keras cloze-qa --input corpus.txt --output cloze.json --dev-output cloze-dev.json
"""

from __future__ import annotations


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "cloze-qa",
        help="SQuAD 2.0 cloze questions from text, to warm up a QA head",
        description=(
            "Make SQuAD 2.0 JSON from plain text (the pretraining input format): "
            "a name, year or number in a sentence becomes a question word, the "
            "words around it the question, and its place in the passage the "
            "answer; questions from another passage of the document, or "
            "(--plausible) from this one with a fact changed, are unanswerable. "
            "Fine-tune on it (`albert-keras finetune --task "
            "squad`), then on your real questions with --init its best.keras: "
            "a small pretrained model learns span QA from few labelled "
            "questions only after such a warm-up."
        ),
    )
    parser.add_argument(
        "--input",
        nargs="+",
        required=True,
        metavar="FILE_OR_GLOB",
        help="UTF-8 text files (.gz too): a paragraph per line, a blank line "
        "between documents",
    )
    parser.add_argument("--output", required=True, help="training SQuAD JSON")
    parser.add_argument(
        "--dev-output", help="also a dev SQuAD JSON from other documents"
    )
    parser.add_argument(
        "--dev-documents",
        type=int,
        default=200,
        help="documents for --dev-output (default: %(default)s)",
    )
    parser.add_argument("--questions-per-passage", type=int, default=3)
    parser.add_argument(
        "--unanswerable", type=float, default=1 / 3, help="share (default: 1/3)"
    )
    parser.add_argument(
        "--plausible",
        type=float,
        default=0.0,
        help="share of the unanswerable questions made from the passage itself "
        "with one fact changed (a name, year or number swapped, a negation, an "
        "opposite), as SQuAD 2.0's are, instead of from another passage "
        "(default: 0)",
    )
    parser.add_argument(
        "--fronted",
        type=float,
        default=0.5,
        help="share of questions with the question word first (default: 0.5)",
    )
    parser.add_argument(
        "--disfluent",
        type=float,
        default=0.0,
        help="share of questions with a restart or a corrected word, as in "
        "spoken questions (default: 0)",
    )
    parser.add_argument("--min-words", type=int, default=100, help="passage length")
    parser.add_argument("--max-words", type=int, default=200, help="passage length")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(run=run)


def run(args):
    from albert_keras.finetuning.cloze_question_generator import (
        ClozeQuestionGenerator,
    )
    from albert_keras.pretraining.pretraining_data import expand_inputs

    files = expand_inputs(args.input)
    generator = ClozeQuestionGenerator(
        questions_per_passage=args.questions_per_passage,
        unanswerable=args.unanswerable,
        plausible=args.plausible,
        min_words=args.min_words,
        max_words=args.max_words,
        fronted=args.fronted,
        disfluent=args.disfluent,
        seed=args.seed,
    )
    counts = generator.write(files, args.output, args.dev_output, args.dev_documents)
    for path, c in counts.items():
        print(
            f"{path}: {c['questions']} questions ({c['unanswerable']} unanswerable) "
            f"from {c['documents']} documents"
        )
    return 0
