"""The flag groups of `albert-keras finetune`: fields, training, squad,
multilabel and run flags (`finetune_cli.add_parser` adds them)."""

from __future__ import annotations

import argparse

from albert_keras.cli_help import rate_or_auto, threshold_choice


def add_field_arguments(parser):
    fields = parser.add_argument_group(
        "fields", "which record key (CSV/TSV column) holds what"
    )
    fields.add_argument(
        "--text-field",
        help="classify/pair/regress: the text (default: the first of text, "
        "sentence, text_a that the file has; pairs: text_a, premise, "
        "sentence1, question); tag: the words, a list or a string (default: "
        "words, tokens); embed: the anchor (query)",
    )
    fields.add_argument(
        "--text-pair-field",
        help="pair: the second text (default: text_b, hypothesis, sentence2, "
        "sentence, with the first); embed: the anchor's positive",
    )
    # The former spelling, "a" or "a,b": still read, no longer shown.
    fields.add_argument("--text-fields", help=argparse.SUPPRESS)
    fields.add_argument(
        "--label-field",
        help="the label (default: label); tag: the tags, one per word (default: "
        "the first of tags, ner_tags, labels, label, pos_tags, pos); "
        "multilabel: the labels, a list or a cell of them separated by | ; or "
        ", (default: labels, label), or several 0/1 columns, one per label: "
        "toxic,obscene,insult",
    )
    fields.add_argument(
        "--context-field", default="context", help="choice: the context"
    )
    fields.add_argument(
        "--question-field",
        default="question",
        help="choice: a question appended to the context (optional)",
    )
    fields.add_argument(
        "--options-field",
        default="options",
        help="choice: the options, a list (in CSV a JSON list), or several "
        "columns separated by commas, e.g. A,B,C,D",
    )
    fields.add_argument(
        "--labels",
        help="classify/pair/multilabel/tag: the label set in class order, "
        "separated by commas "
        "(integers are read as numbers), e.g. 0,1 or negative,positive; "
        "records with another label are skipped and reported (default: the "
        "training file's labels, refusing mixed types and stray rare ones)",
    )
    fields.add_argument(
        "--class-weight",
        metavar="balanced|W,W,...",
        help="classify/pair: weigh each row's loss by its class: 'balanced' "
        "(n / (classes x count) on the training file, so rare classes count "
        "more) or one weight per class in class order, e.g. 1,4 (default: "
        "every row the same)",
    )


def add_training_arguments(parser):
    training = parser.add_argument_group("training")
    _add_length_arguments(training)
    training.add_argument(
        "--batch-size", type=int, default=32, help="examples per step"
    )
    training.add_argument(
        "--learning-rate",
        type=rate_or_auto,
        default="auto",
        help="peak AdamW rate; auto: by the model's hidden size (2e-4 up to "
        "H=256, 1e-4 up to 512, 3e-5 up to 1024 as the official recipes for "
        "base and large, 1e-5 above), printed when the run starts",
    )
    training.add_argument(
        "--warmup-fraction",
        type=float,
        default=0.1,
        help="share of the steps with a linear warmup",
    )
    training.add_argument(
        "--lr-schedule",
        default="linear",
        choices=["linear", "cosine", "constant"],
        help="the rate after the warmup: linear decay to 0 (official), a half "
        "cosine to 0, or constant",
    )
    training.add_argument(
        "--warmup-steps",
        type=int,
        metavar="N",
        help="warm up N updates instead (the official recipes' warmup_step)",
    )
    training.add_argument(
        "--optimizer",
        default="adamw",
        choices=["adamw", "adamw_official"],
        help="adamw: keras.optimizers.AdamW (embedding gradients summed "
        "first); adamw_official: the official AdamWeightDecayOptimizer (no "
        "bias correction)",
    )
    _add_regularization_arguments(training)
    _add_memory_arguments(training)
    training.add_argument(
        "--max-seq-length",
        type=int,
        default=128,
        help="tokens per packed example; longer texts are cut (and counted)",
    )
    training.add_argument(
        "--seed", type=int, default=0, help="data order, dropout and head init"
    )
    training.add_argument(
        "--max-train-examples", type=int, help="a seeded draw of this many (all)"
    )
    training.add_argument(
        "--max-dev-examples", type=int, help="a seeded draw of this many (all)"
    )


def _add_regularization_arguments(training):
    """Weight decay, clipping and dropout."""
    training.add_argument(
        "--weight-decay",
        type=float,
        default=0.01,
        help="AdamW weight decay, not on LayerNorm parameters and biases (0: none)",
    )
    training.add_argument(
        "--max-grad-norm",
        type=float,
        default=1.0,
        help="clip the gradients' global norm to this (0: no clipping)",
    )
    training.add_argument(
        "--label-smoothing",
        type=float,
        default=0.0,
        metavar="E",
        help="classify/pair/choice/tag: spread this share of each row's (each "
        "word's) target evenly over the classes, options or tags "
        "(transformers' label_smoothing_factor; 0: none)",
    )
    training.add_argument(
        "--dropout",
        type=float,
        metavar="RATE",
        help="the encoder's dropout while fine-tuning, on embeddings, blocks "
        "and attention; the head's is --classifier-dropout (default: the "
        "model's own: 0.1 in v1 releases, 0 in v2 ones and `albert-keras "
        "pretrain` runs)",
    )


def _add_memory_arguments(training):
    """What trades memory, speed or trained parameters."""
    training.add_argument(
        "--gradient-checkpointing",
        action="store_true",
        help="recompute each transformer block in the backward pass: less "
        "memory (long sequences, big batches, xxlarge) for about a third more "
        "compute; the same numbers, so a run may resume with it on or off",
    )
    training.add_argument(
        "--adam-epsilon",
        type=float,
        default=1e-6,
        help="AdamW's epsilon (the official recipes'; transformers' Trainer uses 1e-8)",
    )
    training.add_argument(
        "--freeze-embeddings",
        action="store_true",
        help="keep the embedding tables and their LayerNorm as loaded (3.9M of "
        "ALBERT-base's 11.7M parameters); the projection and encoder train",
    )
    training.add_argument(
        "--classifier-dropout",
        type=float,
        metavar="RATE",
        help="the dropout before the task head, as transformers' "
        "classifier_dropout_prob; not for squad, whose heads have none "
        "(default: the official 0.1)",
    )
    training.add_argument(
        "--lora-rank",
        type=int,
        default=0,
        help="LoRA: train only rank-R adapters of the attention's query and "
        "value projections (and the task head), the rest of the backbone "
        "frozen; best.keras holds them merged into the kernels. 0: full "
        "fine-tuning",
    )
    training.add_argument(
        "--gradient-accumulation-steps",
        type=int,
        default=1,
        metavar="N",
        help="update once every N batches with their mean gradient: "
        "--batch-size B trains as batch N*B in the memory of B (1: every batch)",
    )
    training.add_argument(
        "--group-by-length",
        action="store_true",
        help="batch training texts of similar length together: less padding, "
        "faster steps (transformers' group_by_length); not for squad",
    )


def _add_length_arguments(training):
    """How long a run trains and when it scores dev."""
    training.add_argument(
        "--epochs", type=int, default=3, help="training epochs (unless --max-steps)"
    )
    training.add_argument(
        "--max-steps",
        type=int,
        metavar="N",
        help="train N updates instead of --epochs (the data repeats, each "
        "pass shuffled anew); the official recipes' train_step",
    )
    training.add_argument(
        "--eval-every",
        type=int,
        metavar="N",
        help="score dev, keep the best model and back up every N updates and "
        "at the end, instead of after every epoch (for long epochs)",
    )
    training.add_argument(
        "--patience",
        type=int,
        default=2,
        help="stop after this many dev evaluations (epochs, or --eval-every "
        "stretches) without a better dev score",
    )
    training.add_argument(
        "--metric-for-best-model",
        metavar="NAME",
        help="the dev score that picks the best model and counts --patience: "
        "accuracy, f1 or mcc (classify, pair, choice), pearson or spearman "
        "(regress), micro_f1, macro_f1, exact_match or label_accuracy "
        "(multilabel), best_f1, best_exact, f1 or exact (squad), entity_f1, "
        "entity_precision, entity_recall or accuracy (tag), mrr, accuracy or "
        "recall_at_10 (embed) (default: the first of each)",
    )


def add_squad_arguments(parser):
    squad = parser.add_argument_group("squad")
    squad.add_argument(
        "--head",
        default="v2",
        choices=["v2", "simple"],
        help="v2: the official answer-class head (SQuAD 2.0); simple: start/end",
    )
    squad.add_argument(
        "--doc-stride",
        type=int,
        default=64,
        help="tokens between the starts of a long context's windows",
    )
    squad.add_argument(
        "--max-query-length", type=int, default=32, help="question tokens kept"
    )
    squad.add_argument(
        "--max-answer-length",
        type=int,
        default=30,
        help="longest answer predicted, in tokens",
    )
    squad.add_argument(
        "--null-window-fraction",
        type=float,
        default=1.0,
        help="share of training windows without an answer to keep (1.0: all)",
    )
    squad.add_argument(
        "--null-score",
        default="official",
        help="no-answer score thresholded on dev: official (v2: the answer-class "
        "logit); span_adjusted: that minus the best span's log probability, so "
        "confident spans are answered",
    )


def add_multilabel_arguments(parser):
    group = parser.add_argument_group("multilabel")
    group.add_argument(
        "--threshold",
        type=threshold_choice,
        default="auto",
        help="a label is predicted where its probability (sigmoid) is above "
        "this; auto: the one of 0.05, 0.10, ... 0.95 with the best dev micro F1, "
        "chosen after every epoch (the best epoch's is exported and used by "
        "predict); per-label: one for each label, the one with its best dev F1 "
        "(optimistic on a small dev set)",
    )


def add_run_arguments(parser):
    parser.add_argument(
        "--mixed-precision", action="store_true", help="mixed bfloat16 (GPU/TPU)"
    )
    parser.add_argument(
        "--no-jit", action="store_true", help="run without XLA compilation"
    )
    parser.add_argument(
        "--no-export",
        action="store_true",
        help="skip savedmodel/ (the model with its tokenizer, on strings; "
        "squad: questions and contexts in, answers out)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --output-dir that holds a run (without it a "
        "finished run is left as it is and a killed one resumes)",
    )
    parser.add_argument(
        "--force-resume",
        action="store_true",
        help="resume a killed run even though training flags or data changed",
    )


def add_embed_arguments(parser):
    group = parser.add_argument_group(
        "embed",
        "sentence embeddings: --text-field is the anchor (query), "
        "--text-pair-field its positive",
    )
    group.add_argument(
        "--negative-field",
        help="a hard negative of each anchor (a text that looks like a match "
        "and is not), added to the batch's negatives (default: negative, where "
        "the file has it)",
    )
    group.add_argument(
        "--pooling",
        choices=["mean", "max", "cls", "pooled"],
        help="one vector per text: the mean or max of the final hidden states, "
        "the [CLS] state, or the official pooler's output (default: mean)",
    )
    group.add_argument(
        "--scale",
        type=float,
        help="the inverse temperature multiplying the cosines in the loss "
        "(default: 20, as sentence-transformers')",
    )
    group.add_argument(
        "--symmetric",
        action="store_true",
        help="also train each positive to find its anchor among the batch's "
        "anchors (CLIP's loss)",
    )
