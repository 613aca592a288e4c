"""The official ALBERT TF1 code as our oracle: it writes checkpoints and their outputs.

Run it in a process of its own (it switches TensorFlow to TF1 graph mode):

    python official_oracle.py make --spec cases.json --out DIR
        cases.json is a list of case dicts (see cases.py). For each case,
        DIR/<name>/ gets: the official graph's variables set to seeded
        non-trivial values and saved as `model.ckpt-best.{index,data-00000-of-
        00001,meta}` (no `checkpoint` state file, as in the release tars),
        `albert_config.json`, `variables.json` ({name: shape}) and
        `outputs.npz` (the inputs and every official output). With
        "hub_module": true also DIR/<name>_hub/ and DIR/<name>_hub_prefixed/,
        TF1 Hub module folders (variables/variables.*, assets/albert_config.json)
        with plain and `module/`-prefixed variable names.

    python official_oracle.py run --ckpt PREFIX --config albert_config.json
        --inputs inputs.npz --out outputs.npz [--num_labels N]
        [--no_pretraining_heads]
        Restore a checkpoint someone else wrote into the same official graph
        and save its outputs. Every graph variable must be in the checkpoint
        with the graph's shape; extra checkpoint variables (optimizer slots,
        heads not built) are ignored.

outputs.npz keys: input_ids, input_mask, segment_ids, masked_lm_positions (make
only), embedding_output [B,S,E], layer_0..layer_{L*inner-1} [B,S,H] (one per
inner group per layer), sequence_output, pooled_output [B,H], mlm_logits
[B*num_masked, V] (before log_softmax), sop_logits [B,2], classifier_logits
[B,N] (with num_labels).
"""

import argparse
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import tf1_compat  # noqa: E402  (must come before `albert`)
from albert import classifier_utils, modeling, run_pretraining  # noqa: E402

tf = tf1_compat.tf1

INPUT_KEYS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")


def make_inputs(config, batch, length, num_masked, seed):
    """Deterministic inputs: two segments, padding at the end of later rows.

    Row 0 uses the full length; later rows are shorter, so the attention mask
    matters. Masked positions are distinct and inside each row's valid part.
    """
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


@contextlib.contextmanager
def _reusing_model(model):
    """Makes the official create_model use an AlbertModel we already built.

    classifier_utils.create_model builds its own AlbertModel; a second one in
    the graph would get the scope `bert_1`. Handing it ours lets the official
    head code run unchanged on the same backbone.
    """
    original = modeling.AlbertModel
    modeling.AlbertModel = lambda **kwargs: model
    try:
        yield
    finally:
        modeling.AlbertModel = original


def build_graph(config, inputs, num_labels=None, pretraining_heads=True):
    """The official forward graph (is_training=False); returns output tensors."""
    input_ids = tf.constant(inputs["input_ids"])
    input_mask = tf.constant(inputs["input_mask"])
    segment_ids = tf.constant(inputs["segment_ids"])
    batch = inputs["input_ids"].shape[0]
    model = modeling.AlbertModel(
        config=config,
        is_training=False,
        input_ids=input_ids,
        input_mask=input_mask,
        token_type_ids=segment_ids,
    )
    outputs = {
        "embedding_output": model.get_embedding_output(),
        "sequence_output": model.get_sequence_output(),
        "pooled_output": model.get_pooled_output(),
    }
    for k, layer in enumerate(model.get_all_encoder_layers()):
        outputs[f"layer_{k}"] = layer
    if pretraining_heads:
        if "masked_lm_positions" not in inputs:
            raise ValueError("the MLM head needs masked_lm_positions in the inputs")
        positions = inputs["masked_lm_positions"]
        _, _, mlm_log_probs = run_pretraining.get_masked_lm_output(
            config,
            model.get_sequence_output(),
            model.get_embedding_table(),
            tf.constant(positions),
            tf.zeros(positions.shape, tf.int32),
            tf.ones(positions.shape, tf.float32),
        )
        _, _, sop_log_probs = run_pretraining.get_sentence_order_output(
            config, model.get_pooled_output(), tf.zeros([batch], tf.int32)
        )
        # The heads return log_softmax(logits); we want the logits themselves,
        # the input of that op.
        outputs["mlm_logits"] = _log_softmax_input(mlm_log_probs, "cls/predictions/")
        outputs["sop_logits"] = _log_softmax_input(
            sop_log_probs, "cls/seq_relationship/"
        )
    if num_labels:
        # The official run_classifier head: root variables `output_weights`
        # [N, H] and `output_bias` [N]; logits = pooled @ W^T + b.
        with _reusing_model(model):
            _, _, _, logits, _ = classifier_utils.create_model(
                config,
                False,
                input_ids,
                input_mask,
                segment_ids,
                tf.zeros([batch], tf.int32),
                num_labels,
                False,
                "oracle",
            )
        outputs["classifier_logits"] = logits
    return outputs


def _log_softmax_input(log_probs, scope):
    op = log_probs.op
    if op.type != "LogSoftmax" or not op.name.startswith(scope):
        raise RuntimeError(f"unexpected official head graph: {op.name} ({op.type})")
    return op.inputs[0]


def randomize(session, seed):
    """Seeded, non-trivial values for every variable (LayerNorm too).

    Large enough (0.2 rather than the 0.02 init) that a wrong mapping or a
    transposed kernel changes the outputs well beyond float32 round-off.
    """
    rng = np.random.RandomState(seed)
    for var in sorted(tf.global_variables(), key=lambda v: v.op.name):
        shape = var.shape.as_list()
        name = var.op.name
        if var.dtype.base_dtype.is_integer:  # global_step
            value = rng.randint(1, 100000, size=shape)
        elif name.endswith("gamma"):
            value = 1.0 + 0.1 * rng.randn(*shape)
        elif name.endswith(("beta", "bias")):
            value = 0.1 * rng.randn(*shape)
        else:
            value = 0.2 * rng.randn(*shape)
        var.load(np.asarray(value).astype(var.dtype.base_dtype.as_numpy_dtype), session)


def add_training_state():
    """Optimizer slots and global_step, as a training checkpoint has them.

    Plain variables named like the official AdamWeightDecay / LAMB slots
    (`<var>/adam_m`, `<var>/adam_v`); randomize() gives them their values.
    """
    for var in list(tf.trainable_variables()):
        for slot in ("adam_m", "adam_v"):
            tf.get_variable(
                f"{var.op.name}/{slot}",
                shape=var.shape,
                initializer=tf.zeros_initializer(),
                trainable=False,
            )
    tf.train.get_or_create_global_step()


def write_hub_module(session, directory, prefix, config_dict):
    """A TF1 Hub module folder: variables/variables.* and assets/."""
    saver = tf.train.Saver({prefix + v.op.name: v for v in tf.global_variables()})
    os.makedirs(os.path.join(directory, "variables"), exist_ok=True)
    os.makedirs(os.path.join(directory, "assets"), exist_ok=True)
    saver.save(
        session,
        os.path.join(directory, "variables", "variables"),
        write_meta_graph=False,
        write_state=False,
    )
    with open(os.path.join(directory, "assets", "albert_config.json"), "w") as f:
        json.dump(config_dict, f, indent=2)


def make_case(case, out_dir):
    case_dir = os.path.join(out_dir, case["name"])
    os.makedirs(case_dir, exist_ok=True)
    config = modeling.AlbertConfig.from_dict(case["config"])
    inputs = make_inputs(
        config, case["batch_size"], case["seq_length"], case["num_masked"], case["seed"]
    )
    with tf.Graph().as_default(), tf.Session() as session:
        outputs = build_graph(config, inputs, case.get("num_labels"))
        if case.get("optimizer_slots"):
            add_training_state()
        session.run(tf.global_variables_initializer())
        randomize(session, case["seed"])
        values = session.run(outputs)
        tf.train.Saver().save(session, os.path.join(case_dir, "model.ckpt-best"))
        # The release tars ship no `checkpoint` state file; loaders must cope.
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


def make(spec_path, out_dir):
    with open(spec_path) as f:
        cases = json.load(f)
    names = [case["name"] for case in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"case names must be unique: {names}")
    start = time.perf_counter()
    for case in cases:
        make_case(case, out_dir)
    print(f"official oracle: {len(cases)} cases in {time.perf_counter() - start:.1f}s")


def run(ckpt, config_path, inputs_path, out_path, num_labels, pretraining_heads):
    config = modeling.AlbertConfig.from_json_file(config_path)
    with np.load(inputs_path) as data:
        inputs = {k: data[k] for k in INPUT_KEYS if k in data}
    with tf.Graph().as_default(), tf.Session() as session:
        outputs = build_graph(config, inputs, num_labels, pretraining_heads)
        available = dict(tf.train.list_variables(ckpt))
        missing, wrong_shape = [], []
        for var in tf.global_variables():
            name, shape = var.op.name, var.shape.as_list()
            if name not in available:
                missing.append(name)
            elif list(available[name]) != shape:
                wrong_shape.append(f"{name}: graph {shape}, ckpt {available[name]}")
        if missing or wrong_shape:
            sys.exit(
                f"official oracle: checkpoint {ckpt} does not fit the official graph"
                f"\n  missing variables: {missing}\n  wrong shapes: {wrong_shape}"
            )
        tf.train.Saver().restore(session, ckpt)
        values = session.run(outputs)
    np.savez(out_path, **values)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("make", help="write checkpoints + official outputs")
    m.add_argument("--spec", required=True, help="JSON list of case dicts")
    m.add_argument("--out", required=True, help="output folder")
    r = commands.add_parser("run", help="official outputs of a given checkpoint")
    r.add_argument("--ckpt", required=True, help="checkpoint prefix")
    r.add_argument("--config", required=True, help="albert_config.json")
    r.add_argument("--inputs", required=True, help="npz with the input arrays")
    r.add_argument("--out", required=True, help="npz to write")
    r.add_argument("--num_labels", type=int, help="build the classifier head")
    r.add_argument(
        "--no_pretraining_heads",
        action="store_true",
        help="build no MLM/SOP heads (for a classifier checkpoint)",
    )
    args = parser.parse_args(argv)
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
