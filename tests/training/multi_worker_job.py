"""One worker of a 2-worker MultiWorkerMirroredStrategy pretraining run (for tests).

Usage: python multi_worker_job.py INDEX PORT0 PORT1 OUTPUT_DIR STEPS [SLEEP]

Sets TF_CONFIG for worker INDEX of a cluster on 127.0.0.1, trains a tiny
pretrainer with `run_pretraining` (checkpoints every 2 steps) on synthetic
official features, and prints the final global step as JSON. SLEEP seconds
per step (a callback) give the test time to kill a worker mid-run.
"""

import json
import os
import sys
import time

index, port0, port1, output_dir, steps = sys.argv[1:6]
sleep = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"worker": [f"127.0.0.1:{port0}", f"127.0.0.1:{port1}"]},
        "task": {"type": "worker", "index": int(index)},
    }
)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from albert_test_case import micro_config, official_features  # noqa: E402

from albert_keras.pretraining.pretraining_run import run_pretraining  # noqa: E402
from albert_keras.training import get_strategy  # noqa: E402

strategy = get_strategy("multi_worker")
CONFIG = micro_config(50)
BATCH, LENGTH = 8, 12


def dataset(skip):
    features = official_features(64, LENGTH)
    data = tf.data.Dataset.from_tensor_slices(features).repeat().batch(BATCH)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.DATA
    )
    return data.skip(skip).with_options(options)


if sleep:
    # The job to be killed: the job resumed after it draws curves.png again,
    # the one the test checks (a drawing takes about a second an epoch).
    from albert_keras.training import LossCurvePlot

    LossCurvePlot.draw = lambda self: None


class Slow(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        time.sleep(sleep)


metrics = run_pretraining(
    dataset,
    CONFIG,
    output_dir,
    strategy=strategy,
    global_batch_size=BATCH,
    sequence_length=LENGTH,
    num_train_steps=int(steps),
    num_warmup_steps=0,
    learning_rate=1e-2,
    steps_per_epoch=2,
    save_every=2,
    jit_compile=False,
    verbose=0,
    extra_callbacks=[Slow()] if sleep else None,
)
print(json.dumps({"global_step": metrics["global_step"], "worker": int(index)}))
