"""Where a pretrained model's held-out SOP accuracy comes from: by pair kind.

Makes sentence-order pairs from held-out documents exactly as `create-data`
does (`SegmentPairer`, the official `truncate_seq_pair`), scores a
`pretrainer.keras` on them, and splits the accuracy by what the pair is:

- "lone segment": the pair is one segment (a corpus line longer than the
  target) cut in two at a random word; "segment boundary": A and B are whole
  consecutive segments (lines, or sentences with `--split-sentences`);
- "junction gap": how many pieces the truncation took from the end of the
  earlier text and the start of the later one, i.e. from where the two parts
  meet (0: the two parts are still adjacent; the official truncation removes
  pieces from the front or the back at random, so a long pair loses about
  half of its excess at the junction);
- the sequence length.

    python benchmarks/sop_error_analysis.py --model runs/q/run-sop/pretrainer.keras \\
        --vocab runs/q/run-sop/vocab.model \\
        --held-out runs/q/data-*/text/held_out.txt --seq-length 64 --predictions 10
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

import numpy as np


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a pretrainer.keras")
    parser.add_argument("--vocab", required=True, help="its SentencePiece .model")
    parser.add_argument(
        "--held-out",
        required=True,
        help="held-out documents (a segment per line, blank lines between "
        "documents), e.g. the text/held_out.txt of bench_pretraining_quality.py",
    )
    parser.add_argument("--seq-length", type=int, default=64)
    parser.add_argument("--predictions", type=int, default=10)
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="segments are sentences instead of the lines",
    )
    parser.add_argument(
        "--passes", type=int, default=4, help="pairings of the documents"
    )
    parser.add_argument("--instances", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=777)
    parser.add_argument("--batch", type=int, default=256)
    return parser.parse_args(argv)


def make_pairs(args):
    """Features of the held-out pairs, their labels and their descriptions."""
    from albert_keras.pretraining.corpus_tokenizer import CorpusTokenizer
    from albert_keras.pretraining.ngram_masker import NgramMasker
    from albert_keras.pretraining.pretraining_data import (
        _build_features,
        tokenize_segments,
    )
    from albert_keras.pretraining.segment_pairer import SegmentPairer
    from albert_keras.pretraining.text_documents import read_documents

    class RecordingPairer(SegmentPairer):
        """Keeps the spans as they were before truncation."""

        def _truncate(self, spans, max_tokens, rng):
            self.untruncated = spans.copy()
            return SegmentPairer._truncate(spans, max_tokens, rng)

    paths = sorted(glob.glob(args.held_out))
    if not paths:
        raise SystemExit(f"No file matches --held-out {args.held_out!r}.")
    tokenizer = CorpusTokenizer(args.vocab, True)
    documents = read_documents(paths[0], args.split_sentences)
    ids, segment_lengths, starts = tokenize_segments(documents, tokenizer)
    segment_starts = set((np.cumsum(segment_lengths) - segment_lengths).tolist())
    rng = np.random.default_rng(args.seed)
    pairer = RecordingPairer(args.seq_length, 0.1, False, tokenizer.word_starts)
    spans, labels, before = [], [], []
    for _ in range(args.passes):
        s, y, _ = pairer.pairs(ids, segment_lengths, starts, rng)
        spans.append(s)
        labels.append(y)
        before.append(pairer.untruncated)
    spans, labels, before = (np.concatenate(x) for x in (spans, labels, before))
    chosen = rng.permutation(len(spans))[: args.instances]
    spans, labels, before = spans[chosen], labels[chosen], before[chosen]
    masker = NgramMasker(
        len(tokenizer.word_starts),
        tokenizer.word_starts,
        max_predictions_per_seq=args.predictions,
        mask_id=tokenizer.mask_id,
        cls_id=tokenizer.cls_id,
        sep_id=tokenizer.sep_id,
    )
    features, seq_lengths, _ = _build_features(
        ids,
        spans,
        labels,
        masker,
        tokenizer.cls_id,
        tokenizer.sep_id,
        args.seq_length,
        rng,
    )
    # Columns: (a_start, a_end, b_start, b_end); label 1 = B, A (swapped).
    swapped = labels == 1
    junction = np.where(swapped, before[:, 3], before[:, 1])  # earlier text's end
    lone = np.array([int(j) not in segment_starts for j in junction])
    gap = np.where(
        swapped,
        (before[:, 3] - spans[:, 3]) + (spans[:, 0] - before[:, 0]),
        (before[:, 1] - spans[:, 1]) + (spans[:, 2] - before[:, 2]),
    )
    kinds = {
        "all": np.ones(len(labels), bool),
        "lone segment, cut at a word": lone,
        "segment boundary": ~lone,
        "junction gap 0": gap == 0,
        "junction gap 1-10": (gap > 0) & (gap <= 10),
        "junction gap > 10": gap > 10,
        f"length < {args.seq_length - 4}": seq_lengths < args.seq_length - 4,
        f"length >= {args.seq_length - 4}": seq_lengths >= args.seq_length - 4,
    }
    return features, labels, kinds


def main(argv=None):
    args = parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    features, labels, kinds = make_pairs(args)
    import keras
    from bench_pretraining_quality import sop_predictions  # this folder

    import albert_keras.models  # noqa: F401  (registers the classes)
    from albert_keras import AlbertPretrainer

    model = keras.saving.load_model(args.model)
    x, _ = AlbertPretrainer.features_to_xy(features)
    right = sop_predictions(model, x, len(labels), args.batch) == labels
    print(f"{args.model}: {len(labels)} held-out pairs of {args.held_out}")
    print(f"{'pairs':30s} {'share':>6s} {'SOP acc':>8s}")
    for name, mask in kinds.items():
        if mask.any():
            print(f"{name:30s} {mask.mean():6.3f} {right[mask].mean():8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
