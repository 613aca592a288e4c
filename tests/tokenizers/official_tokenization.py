"""The official ALBERT code that tokenizes and packs (albert-tensorflow 1.1), in TF 2.

`tokenization`, `classifier_utils` and `squad_utils` need little of TensorFlow
1: `tf.gfile`, `tf.logging`, and `tensorflow.contrib` / `albert.modeling` /
`albert.optimization` only at import (their model and input functions are
not used here). This module lends those for the import, then takes every
borrowed and every new `sys.modules` entry back out, so the rest of the test
process (and the TF1 oracle, which needs a clean `albert.*`) sees nothing.
Test helper only: nothing of it goes into the package.
"""

from __future__ import annotations

import importlib
import sys
import types

import tensorflow as tf

from albert_keras.tokenizers.sentencepiece_text import preprocess_text  # noqa: F401


def _import_official(names):
    tf1 = types.ModuleType("tensorflow")
    tf1.gfile = types.SimpleNamespace(GFile=tf.io.gfile.GFile, Open=tf.io.gfile.GFile)
    tf1.logging = tf.compat.v1.logging
    lent = {"tensorflow": tf1}
    contrib = types.ModuleType("tensorflow.contrib")
    tf1.contrib = contrib
    lent["tensorflow.contrib"] = contrib
    for part in ("data", "metrics", "tpu", "layers"):
        module = types.ModuleType(f"tensorflow.contrib.{part}")
        setattr(contrib, part, module)
        lent[f"tensorflow.contrib.{part}"] = module
    for name in ("albert.modeling", "albert.optimization", "albert.fine_tuning_utils"):
        lent[name] = types.ModuleType(name)
    before = set(sys.modules)
    saved = {name: sys.modules.get(name) for name in lent}
    sys.modules.update(lent)
    try:
        modules = [importlib.import_module(f"albert.{name}") for name in names]
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        package = sys.modules.get("albert")
        for name in set(sys.modules) - before:
            if name.startswith("albert."):
                del sys.modules[name]
                if package is not None:
                    package.__dict__.pop(name.split(".", 1)[1], None)
    return modules


tokenization, classifier_utils, squad_utils = _import_official(
    ["tokenization", "classifier_utils", "squad_utils"]
)


# (what, identical, compared) of every exact-match comparison this session,
# printed in the terminal summary by conftest.py.
EXACT_MATCHES = []


def record_exact_match(what: str, identical: int, compared: int) -> None:
    """Keeps (and prints, for `-s`) one measured exact-match rate."""
    EXACT_MATCHES.append((what, identical, compared))
    print(f"exact match {what}: {identical / compared:.2%} of {compared}")


def official_ids(model_file, texts, lower):
    """Ids as the official run_classifier computes them for each text (spm)."""
    tokenizer = tokenization.FullTokenizer(
        None, do_lower_case=lower, spm_model_file=model_file
    )
    return [
        tokenizer.convert_tokens_to_ids(
            tokenizer.tokenize(tokenization.preprocess_text(t, lower=lower))
        )
        for t in texts
    ]


def official_wordpiece_ids(vocab_file, texts, lower):
    """Ids of the official FullTokenizer without spm (the *_zh models)."""
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=lower)
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)) for t in texts]


def official_classifier_features(tokenizer, pairs, max_seq_length, use_spm, lower):
    """`classifier_utils.convert_single_example` on (text_a, text_b or None) pairs.

    Texts go through the processors' `process_text` first, as in
    run_classifier. Returns (input_ids, segment_ids, input_mask) lists.
    """

    def process(text):
        if use_spm:
            return tokenization.preprocess_text(text, lower=lower)
        return tokenization.convert_to_unicode(text)

    features = []
    for index, (a, b) in enumerate(pairs):
        example = classifier_utils.InputExample(
            guid=str(index),
            text_a=process(a),
            text_b=None if b is None else process(b),
            label="x",
        )
        # ex_index >= 5: the official code logs only the first five examples.
        feature = classifier_utils.convert_single_example(
            10, example, ["x"], max_seq_length, tokenizer, "test"
        )
        features.append((feature.input_ids, feature.segment_ids, feature.input_mask))
    return features


def official_squad_features(
    model_file, questions, contexts, lower, max_seq_length, doc_stride, max_query
):
    """`squad_utils.convert_examples_to_features` (prediction mode) per example.

    Returns {example_index: [feature, ...]}, each feature with input_ids,
    segment_ids, input_mask, p_mask and token_is_max_context (a dict), and
    the indices of examples the official code itself fails on (its
    character alignment, `_convert_index`, raises on some real paragraphs).
    """
    tokenizer = tokenization.FullTokenizer(
        None, do_lower_case=lower, spm_model_file=model_file
    )
    features, failed = {}, []
    for index, (question, context) in enumerate(zip(questions, contexts, strict=True)):
        example = squad_utils.SquadExample(
            qas_id=str(index),
            question_text=question,
            paragraph_text=context,
            is_impossible=False,
        )
        found = []
        try:
            squad_utils.convert_examples_to_features(
                [example],
                tokenizer,
                max_seq_length,
                doc_stride,
                max_query,
                is_training=False,
                output_fn=found.append,
                do_lower_case=lower,
            )
        except (IndexError, AssertionError):
            failed.append(index)
            continue
        if found:
            features[index] = found
    return features, failed
