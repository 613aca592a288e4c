"""Run in a subprocess: read TFRecords with the official `run_pretraining` reader.

Usage: python official_reader.py PATTERN MAX_SEQ MAX_PRED BATCH OUT_NPZ
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "oracle"))
import numpy as np  # noqa: E402
import tf1_compat  # noqa: E402,F401  (before `albert`)
from albert import run_pretraining  # noqa: E402

tf = tf1_compat.tf1
pattern, max_seq, max_pred, batch, out = sys.argv[1:6]
# albert-tensorflow 1.1 reads FLAGS.masked_lm_budget without defining it.
if "masked_lm_budget" not in run_pretraining.FLAGS:
    tf.flags.DEFINE_integer("masked_lm_budget", 0, "as in google-research/albert")
run_pretraining.FLAGS(["official_reader"])
files = sorted(tf.gfile.Glob(pattern))
input_fn = run_pretraining.input_fn_builder(
    files, int(max_seq), int(max_pred), is_training=False
)
features = tf.data.make_one_shot_iterator(
    input_fn({"batch_size": int(batch)})
).get_next()
with tf.Session() as session:
    values = session.run(features)
np.savez(out, **values)
