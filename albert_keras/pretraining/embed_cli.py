"""`albert-keras embed`: a vector per text, from a pretrained or fine-tuned model."""

from __future__ import annotations

import json
import os

from albert_keras.cli_help import DefaultsHelpFormatter, positive_int
from albert_keras.pretraining.fill_mask_cli import (
    DEFAULT_INIT,
    add_text_inputs,
    given_texts,
)

POOLINGS = ("mean", "max", "cls", "pooled")  # AlbertEmbeddingTextModel's
OUTPUT_KINDS = (".npy", ".jsonl")
SHOWN = 10  # texts the similarity table shows at most
_MISSING_INIT = (
    "It is the default --init: where `albert-keras pretrain` writes its model. "
    "Run `albert-keras pretrain` first (a few minutes on a CPU), or pass --init "
    "with an official release folder, a transformers or keras-hub folder, or the "
    "output folder of `albert-keras finetune`."
)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "embed",
        formatter_class=DefaultsHelpFormatter,
        help="one vector per text (sentence embeddings) for search or clustering",
        description=(
            "Run texts through a model's encoder and pool its final hidden "
            "states into one vector per text. Texts come as arguments or from "
            "--input; a few texts print their cosine similarities, --output "
            "keeps the vectors (.npy, a row per text, or JSON Lines)."
        ),
        epilog=(
            'Example: albert-keras embed "Emma was handsome." "She was '
            'clever." --normalize'
        ),
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to embed")
    parser.add_argument(
        "--init",
        default=DEFAULT_INIT,
        help="the model: the output folder of `albert-keras pretrain` or "
        "`finetune`, a .keras file, an official release folder, a TF1 Hub, "
        "transformers or keras-hub folder, or a converted release's name",
    )
    add_text_inputs(parser)
    parser.add_argument(
        "--output",
        help="write the vectors here: .npy (float32 [texts, hidden size], in the "
        "order of the texts) or .jsonl ({'text', 'embedding'} per line)",
    )
    parser.add_argument(
        "--export",
        metavar="DIR",
        help="also write the embedding model as a SavedModel taking raw text "
        "(serve(texts) -> embeddings; TensorFlow and tensorflow-text only)",
    )
    parser.add_argument(
        "--query",
        action="append",
        metavar="TEXT",
        help="search: print the --top-k texts closest to this one (cosine "
        "similarity); repeat it for several queries",
    )
    parser.add_argument(
        "--top-k",
        type=positive_int,
        default=5,
        help="texts printed for each --query",
    )
    parser.add_argument(
        "--pooling",
        choices=POOLINGS,
        help="mean or max of the final hidden states over the text's tokens "
        "(padding left out), the [CLS] state, or the official pooler's output "
        "(default: a `finetune --task embed` run's own, else mean)",
    )
    parser.add_argument(
        "--normalize",
        action="store_true",
        help="unit-length vectors (a dot product is then the cosine similarity; "
        "always on for a `finetune --task embed` run)",
    )
    parser.add_argument(
        "--max-seq-length",
        type=positive_int,
        default=128,
        help="packed length; longer texts are cut",
    )
    parser.add_argument(
        "--batch-size", type=positive_int, default=32, help="texts run at once"
    )
    parser.set_defaults(run=run_embed)


def run_embed(args):
    import keras

    texts = []
    if args.texts or args.input or not args.export:  # --export alone needs none
        example = 'albert-keras embed "Emma was handsome." "She was clever."'
        texts = given_texts(args, example)
    check_output(args.output)
    if args.export and os.path.exists(args.export):
        raise ValueError(
            f"--export {args.export!r} exists: name a new folder (or remove it)."
        )
    if keras.backend.backend() != "tensorflow":
        # The tokenizer runs in TensorFlow ops: the same command there.
        from albert_keras.quiet_start import rerun_on_tensorflow

        return rerun_on_tensorflow(args.argv)
    trained = embedding_run_pooling(args.init)
    if trained:  # a --task embed run: its vectors as trained
        args.pooling, args.normalize = args.pooling or trained, True
    args.pooling = args.pooling or "mean"
    model = load_embedding_model(
        args.init, args.vocab, args.max_seq_length, args.pooling, args.normalize
    )
    if texts:
        _embed_texts(model, texts, args)
    if args.export:
        from albert_keras.atomic_files import save_atomically

        save_atomically(args.export, lambda folder: model.export(folder, verbose=False))
        print(f"Wrote {args.export}: serve(texts) -> embeddings, raw text in.")
    return 0


def _embed_texts(model, texts, args):
    """Embeds `texts`, prints their similarities (or the search) and writes
    --output."""
    vectors = model.embed(texts, batch_size=args.batch_size)
    how = f"{args.pooling} pooling" + (", normalized" if args.normalize else "")
    print(
        f"Embedded {_count(len(texts), 'text')} with {args.init}: {vectors.shape[0]} x "
        f"{vectors.shape[1]} float32 ({how})."
    )
    if args.query:
        found = model.embed(args.query, batch_size=args.batch_size)
        print(nearest_texts(args.query, found, texts, vectors, args.top_k))
    elif len(texts) > 1:
        print(similarity_table(texts[:SHOWN], vectors[:SHOWN]))
    if args.output:
        write_vectors(args.output, texts, vectors)
        print(f"Wrote {args.output}: {_count(len(texts), 'vector')}.")
    elif len(texts) > SHOWN:
        print(f"Pass --output FILE.npy (or .jsonl) to keep all {len(texts)} vectors.")


def _count(number, noun):
    return f"{number} {noun}" + ("" if number == 1 else "s")


def embedding_run_pooling(init) -> str | None:
    """The pooling a `finetune --task embed` run folder (or its best.keras)
    trained with, else None.

    >>> embedding_run_pooling("albert_tiny") is None
    True
    """
    from checkpoints_convert.hf_labels import settings_beside

    if not os.path.exists(init):
        return None
    try:
        task = (settings_beside(init) or {}).get("task") or {}
    except ValueError:  # a settings.json that is not JSON: not a run's
        return None
    if task.get("class") != "SentenceEmbeddingTask":
        return None
    return task.get("config", {}).get("pooling", "mean")


def check_output(path):
    """Refuses an --output of another kind than .npy or .jsonl, before any work."""
    if path is not None and not path.endswith(OUTPUT_KINDS):
        raise ValueError(
            f"--output {path!r}: name a .npy file (the vectors as one float32 "
            "array) or a .jsonl file (each text with its vector)."
        )


def write_vectors(path, texts, vectors):
    """`vectors` [texts, H] to `path` (.npy or .jsonl), complete or not at all.

    Example:
    >>> import tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "v.npy")
    >>> write_vectors(path, ["a"], np.ones((1, 2), "float32"))
    >>> np.load(path).tolist()
    [[1.0, 1.0]]
    """
    import numpy as np

    from albert_keras.atomic_files import atomic_write

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if path.endswith(".npy"):
        with atomic_write(path, "wb") as f:
            np.save(f, np.asarray(vectors, "float32"))
        return
    with atomic_write(path, "w", encoding="utf-8") as f:
        for text, vector in zip(texts, vectors, strict=True):
            row = {"text": text, "embedding": [float(v) for v in vector]}
            f.write(json.dumps(row) + "\n")


def similarity_table(texts, vectors):
    """The cosine similarities of `vectors`, a row per text.

    Example:
    >>> import numpy as np
    >>> print(similarity_table(["up", "down"], np.array([[1.0, 0], [1, 1]])))
    Cosine similarity:
              [1]    [2]
       [1]  1.000  0.707  up
       [2]  0.707  1.000  down
    """
    cosine = cosine_similarities(vectors, vectors)
    header = "      " + "".join(f"{f'[{i}]':>7}" for i in range(1, len(texts) + 1))
    lines = ["Cosine similarity:", header]
    for i, text in enumerate(texts):
        cells = "".join(f"{value:7.3f}" for value in cosine[i])
        shown = text if len(text) <= 60 else text[:57] + "..."
        lines.append(f"  {f'[{i + 1}]':>4}{cells}  {shown}")
    return "\n".join(lines)


def nearest_texts(queries, query_vectors, texts, vectors, top_k):
    """The lines of a search: each query, then its `top_k` closest texts.

    Example:
    >>> import numpy as np
    >>> print(nearest_texts(["up"], np.array([[1.0, 0]]), ["north", "east"],
    ...                     np.array([[1.0, 0.1], [0, 1]]), 5))
    Query: up
      0.995  north
      0.000  east
    """
    cosine = cosine_similarities(query_vectors, vectors)
    lines = []
    for query, row in zip(queries, cosine, strict=True):
        lines.append(f"Query: {query}")
        for index in sorted(range(len(texts)), key=lambda i: -row[i])[:top_k]:
            text = texts[index]
            shown = text if len(text) <= 70 else text[:67] + "..."
            lines.append(f"  {row[index]:.3f}  {shown}")
    return "\n".join(lines)


def cosine_similarities(a, b):
    """[len(a), len(b)] cosine similarities of two sets of vectors (float64)."""
    import numpy as np

    a, b = (np.asarray(v, "float64") for v in (a, b))
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def load_embedding_model(
    init, vocab=None, sequence_length=128, pooling="mean", normalize=False
):
    """An `AlbertEmbeddingTextModel` of `init`'s backbone and vocabulary.

    Args:
        init: what --init takes.
        vocab: the vocabulary, default the one beside `init`.
        sequence_length: packed length (at most the model's positions).
        pooling: one of `POOLINGS`.
        normalize: unit-length vectors.

    Raises:
        ValueError: `init` is a preset without released weights (random).
        FileNotFoundError: no such model or vocabulary.
    """
    from albert_keras.models.albert_embedding_text_model import (
        AlbertEmbeddingTextModel,
    )
    from albert_keras.presets import ALIASES, PRESETS
    from albert_keras.tokenizers.vocabulary_files import load_tokenizer
    from checkpoints_convert.backbone_loader import (
        find_vocabulary,
        load_backbone,
        resolve_init,
    )

    path = resolve_init(init, _MISSING_INIT if init == DEFAULT_INIT else "")
    if path in PRESETS or path in ALIASES:
        raise ValueError(
            f"--init {path!r} is a preset without released weights: random "
            "vectors mean nothing. Pass a trained model (the output folder of "
            "`albert-keras pretrain` or `finetune`, an official release folder, ...)."
        )
    tokenizer = load_tokenizer(find_vocabulary(path, vocab))
    backbone = load_backbone(os.fspath(path), tokenizer.vocabulary_size())
    length = min(sequence_length, backbone.config.max_position_embeddings)
    return AlbertEmbeddingTextModel(
        backbone,
        tokenizer,
        length,
        pooling=pooling,
        normalize=normalize,
        dynamic_length=True,
    )
