"""The official ALBERT TF1 code as our oracle: it writes checkpoints and their outputs.

Run in its own process (graph mode, TF1 `tensorflow`):

    python official_oracle.py make --spec cases.json --out DIR
        For each case: build the official graph (AlbertModel + the official MLM,
        SOP and optionally run_classifier heads), set every variable to seeded
        non-trivial values, save `model.ckpt-best.*` (no `checkpoint` state
        file, as in the release tars), `albert_config.json`, `variables.json`
        and `outputs.npz` (inputs and every official output). With
        "hub_module": also TF1 Hub style folders, with and without `module/`.
    python official_oracle.py run --ckpt PREFIX --config CFG --inputs X.npz
        --out Y.npz [--num_labels N]
        [--no_pretraining_heads]
        Restore a checkpoint written by someone else into the official graph
        and save its outputs; every graph variable must be in the checkpoint.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import tf1_compat  # noqa: E402,F401  (must come before `albert`)
from albert import classifier_utils, modeling, run_pretraining  # noqa: E402

tf = tf1_compat.tf1


def make_inputs(config, batch, length, num_masked, seed):
    """Deterministic inputs: two segments, padding at the end of later rows."""
    rng = np.random.RandomState(seed + 1)
    ids = rng.randint(0, config.vocab_size, (batch, length)).astype("int32")
    segments = np.zeros((batch, length), "int32")
    mask = np.ones((batch, length), "int32")
    positions = np.zeros((batch, num_masked), "int32")
    for row in range(batch):
        valid = length - (row * length) // (2 * batch)
        mask[row, valid:] = 0
        segments[row, valid // 2 : valid] = 1
        positions[row] = np.sort(rng.choice(valid, num_masked, replace=False))
    return {
        "input_ids": ids,
        "input_mask": mask,
        "segment_ids": segments,
        "masked_lm_positions": positions,
    }


def build_graph(config, inputs, num_labels=None, pretraining_heads=True):
    """The official forward graph; returns a dict of output tensors."""
    batch, num_masked = inputs["masked_lm_positions"].shape
    model = modeling.AlbertModel(
        config=config,
        is_training=False,
        input_ids=tf.constant(inputs["input_ids"]),
        input_mask=tf.constant(inputs["input_mask"]),
        token_type_ids=tf.constant(inputs["segment_ids"]),
    )
    outputs = {
        "embedding_output": model.get_embedding_output(),
        "sequence_output": model.get_sequence_output(),
        "pooled_output": model.get_pooled_output(),
    }
    if pretraining_heads:
        run_pretraining.get_masked_lm_output(
            config,
            model.get_sequence_output(),
            model.get_embedding_table(),
            tf.constant(inputs["masked_lm_positions"]),
            tf.zeros([batch, num_masked], tf.int32),
            tf.ones([batch, num_masked], tf.float32),
        )
        run_pretraining.get_sentence_order_output(
            config, model.get_pooled_output(), tf.zeros([batch], tf.int32)
        )
        graph = tf.get_default_graph()
        # The logits, before the official log_softmax.
        outputs["mlm_logits"] = graph.get_tensor_by_name("cls/predictions/BiasAdd:0")
        outputs["sop_logits"] = graph.get_tensor_by_name(
            "cls/seq_relationship/BiasAdd:0"
        )
    for k, layer in enumerate(model.get_all_encoder_layers()):
        outputs[f"layer_{k}"] = layer
    if num_labels:
        # The official run_classifier head (classifier_utils.create_model with
        # is_training=False): root `output_weights` [N, H], `output_bias` [N].
        hidden = config.hidden_size
        weights = tf.get_variable(
            "output_weights",
            [num_labels, hidden],
            initializer=tf.truncated_normal_initializer(stddev=0.02),
        )
        bias = tf.get_variable(
            "output_bias", [num_labels], initializer=tf.zeros_initializer()
        )
        logits = tf.matmul(model.get_pooled_output(), weights, transpose_b=True)
        outputs["classifier_logits"] = tf.nn.bias_add(logits, bias)
    assert classifier_utils.create_model  # the head above mirrors it
    return outputs


def randomize(session, seed):
    """Seeded, non-trivial values for every variable (LayerNorm too)."""
    rng = np.random.RandomState(seed)
    for var in sorted(tf.global_variables(), key=lambda v: v.name):
        shape = var.shape.as_list()
        name = var.op.name
        if name.endswith("gamma"):
            value = 1.0 + 0.1 * rng.randn(*shape)
        elif name.endswith(("beta", "bias")):
            value = 0.1 * rng.randn(*shape)
        else:
            value = 0.2 * rng.randn(*shape)
        var.load(np.asarray(value).astype(var.dtype.as_numpy_dtype), session)


def add_training_state(seed):
    """Optimizer slots and global_step, as a training checkpoint has them."""
    rng = np.random.RandomState(seed + 2)
    for var in list(tf.trainable_variables()):
        for slot in ("adam_m", "adam_v"):
            tf.get_variable(
                f"{var.op.name}/{slot}",
                initializer=np.abs(rng.randn(*var.shape.as_list())).astype("float32"),
                trainable=False,
            )
    tf.train.get_or_create_global_step()


def write_hub_module(session, directory, prefix, config_dict):
    """A TF1 Hub module folder: variables/variables.* and assets/."""
    names = {var.op.name: var for var in tf.global_variables()}
    saver = tf.train.Saver({prefix + name: var for name, var in names.items()})
    os.makedirs(os.path.join(directory, "variables"), exist_ok=True)
    os.makedirs(os.path.join(directory, "assets"), exist_ok=True)
    saver.save(
        session,
        os.path.join(directory, "variables", "variables"),
        write_meta_graph=False,
        write_state=False,
    )
    with open(os.path.join(directory, "assets", "albert_config.json"), "w") as f:
        json.dump(config_dict, f)


def make(spec_path, out_dir):
    with open(spec_path) as f:
        cases = json.load(f)
    for case in cases:
        case_dir = os.path.join(out_dir, case["name"])
        os.makedirs(case_dir, exist_ok=True)
        config = modeling.AlbertConfig.from_dict(case["config"])
        inputs = make_inputs(
            config,
            case["batch_size"],
            case["seq_length"],
            case["num_masked"],
            case["seed"],
        )
        with tf.Graph().as_default(), tf.Session() as session:
            tf.set_random_seed(case["seed"])
            outputs = build_graph(config, inputs, case.get("num_labels"))
            if case.get("optimizer_slots"):
                add_training_state(case["seed"])
            session.run(tf.global_variables_initializer())
            randomize(session, case["seed"])
            values = session.run(outputs)
            saver = tf.train.Saver()
            saver.save(session, os.path.join(case_dir, "model.ckpt-best"))
            os.remove(os.path.join(case_dir, "checkpoint"))
            if case.get("hub_module"):
                write_hub_module(session, case_dir + "_hub", "", case["config"])
                write_hub_module(
                    session, case_dir + "_hub_prefixed", "module/", case["config"]
                )
            shapes = {v.op.name: v.shape.as_list() for v in tf.global_variables()}
        with open(os.path.join(case_dir, "albert_config.json"), "w") as f:
            json.dump(case["config"], f, indent=2)
        with open(os.path.join(case_dir, "variables.json"), "w") as f:
            json.dump(shapes, f, indent=2)
        np.savez(os.path.join(case_dir, "outputs.npz"), **inputs, **values)


def run(ckpt, config_path, inputs_path, out_path, num_labels, pretraining_heads):
    config = modeling.AlbertConfig.from_json_file(config_path)
    inputs = dict(np.load(inputs_path))
    with tf.Graph().as_default(), tf.Session() as session:
        outputs = build_graph(config, inputs, num_labels, pretraining_heads)
        available = {name for name, _ in tf.train.list_variables(ckpt)}
        missing = [
            v.op.name for v in tf.global_variables() if v.op.name not in available
        ]
        if missing:
            sys.exit(f"checkpoint {ckpt} lacks graph variables: {missing}")
        tf.train.Saver().restore(session, ckpt)
        values = session.run(outputs)
    np.savez(out_path, **values)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("make")
    m.add_argument("--spec", required=True)
    m.add_argument("--out", required=True)
    r = commands.add_parser("run")
    r.add_argument("--ckpt", required=True)
    r.add_argument("--config", required=True)
    r.add_argument("--inputs", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--num_labels", type=int)
    r.add_argument(
        "--no_pretraining_heads",
        action="store_true",
        help="build no MLM/SOP heads (for a classifier checkpoint)",
    )
    args = parser.parse_args()
    if args.command == "make":
        make(args.spec, args.out)
    else:
        run(
            args.ckpt,
            args.config,
            args.inputs,
            args.out,
            args.num_labels,
            not args.no_pretraining_heads,
        )


if __name__ == "__main__":
    main()
