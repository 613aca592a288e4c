"""The official SQuAD 2.0 head (`squad_utils.create_v2_model`) as an oracle.

    python squad_v2_oracle.py --config albert_config.json --out DIR

Builds the official v2 graph at inference (`is_training=False`: the start /
end beam), gives every variable a seeded non-trivial value, saves
`DIR/model.ckpt-best`, and writes `DIR/outputs.npz`: the inputs (`input_ids`,
`input_mask`, `segment_ids`, `p_mask`, `start_positions`), the beam outputs
(`start_top_log_probs`, `start_top_index`, `end_top_log_probs`,
`end_top_index`, `cls_logits`), then, in a second graph restored from the
same checkpoint with `is_training=True` (dropout 0), the training outputs
`train_start_log_probs`, `train_end_log_probs` (conditioned on the given
`start_positions`) and `train_cls_logits`. Runs in a process of its own.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import tf1_compat  # noqa: E402  (must come before `albert`)
from albert import modeling, squad_utils  # noqa: E402
from official_oracle import randomize  # noqa: E402

tf = tf1_compat.tf1
BATCH, LENGTH, START_N_TOP, END_N_TOP = 3, 12, 3, 2


def inputs(config):
    rng = np.random.RandomState(7)
    ids = rng.randint(5, config.vocab_size, (BATCH, LENGTH)).astype("int32")
    mask = np.ones((BATCH, LENGTH), "int32")
    mask[2, 9:] = 0
    segments = np.zeros((BATCH, LENGTH), "int32")
    segments[:, 4:] = 1
    # [CLS] q q [SEP] context ... [SEP]: question, [SEP]s and padding masked.
    p_mask = np.zeros((BATCH, LENGTH), "int32")
    p_mask[:, 1:4] = 1
    p_mask[:, -1] = 1
    p_mask[2, 8:] = 1
    starts = np.array([5, 0, 7], "int32")
    return {
        "input_ids": ids,
        "input_mask": mask,
        "segment_ids": segments,
        "p_mask": p_mask,
        "start_positions": starts,
    }


def build(config, data, is_training):
    features = {k: tf.constant(v) for k, v in data.items()}
    return squad_utils.create_v2_model(
        albert_config=config,
        is_training=is_training,
        input_ids=features["input_ids"],
        input_mask=features["input_mask"],
        segment_ids=features["segment_ids"],
        use_one_hot_embeddings=False,
        features=features,
        max_seq_length=LENGTH,
        start_n_top=START_N_TOP,
        end_n_top=END_N_TOP,
        dropout_prob=0.0,
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    config = modeling.AlbertConfig.from_json_file(args.config)
    data = inputs(config)
    prefix = os.path.join(args.out, "model.ckpt-best")
    results = dict(data)
    with tf.Graph().as_default():
        outputs = build(config, data, is_training=False)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            randomize(session, seed=11)
            results.update(session.run(outputs))
            tf.train.Saver().save(session, prefix)
            variables = {v.op.name: v.shape.as_list() for v in tf.global_variables()}
    with tf.Graph().as_default():
        outputs = build(config, data, is_training=True)
        with tf.Session() as session:
            tf.train.Saver().restore(session, prefix)
            for key, value in session.run(outputs).items():
                results["train_" + key] = value
    np.savez(os.path.join(args.out, "outputs.npz"), **results)
    with open(os.path.join(args.out, "variables.json"), "w") as f:
        json.dump(variables, f, indent=1)


if __name__ == "__main__":
    main()
