"""The official `albert.tokenization` (albert-tensorflow 1.1) importable under TF 2.

It only needs `tf.gfile` and `tf.logging` from TensorFlow 1; this shim lends
them for the import and puts the real module back.
"""

import sys
import types

import tensorflow as tf

_shim = types.ModuleType("tensorflow")
_shim.gfile = types.SimpleNamespace(GFile=tf.io.gfile.GFile)
_shim.logging = tf.compat.v1.logging
_real = sys.modules["tensorflow"]
sys.modules["tensorflow"] = _shim
try:
    from albert import tokenization  # noqa: E402
finally:
    sys.modules["tensorflow"] = _real


def official_ids(model_file, texts, lower):
    """Ids as the official run_classifier computes them for each text."""
    tokenizer = tokenization.FullTokenizer(
        None, do_lower_case=lower, spm_model_file=model_file
    )
    return [
        tokenizer.convert_tokens_to_ids(
            tokenizer.tokenize(tokenization.preprocess_text(t, lower=lower))
        )
        for t in texts
    ]
