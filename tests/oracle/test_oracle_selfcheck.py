"""The official-code oracle checked against an independent NumPy forward pass.

If these pass, the TF1 shim (tf1_compat.py) runs the official ALBERT code the
way TF 1.15 did, and the oracle's files (checkpoints, outputs.npz, hub folders,
`run` on someone else's checkpoint) mean what the other tests assume.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ORACLE_DIR = os.path.dirname(os.path.abspath(__file__))
if ORACLE_DIR not in sys.path:
    sys.path.insert(0, ORACLE_DIR)

import numpy_reference as ref  # noqa: E402
from cases import CASES  # noqa: E402
from official_cases import official_cases  # noqa: E402

RUNS = os.path.join(ORACLE_DIR, "oracle_runs.py")
TOLERANCE = 1e-5
CASE_NAMES = [case["name"] for case in CASES]
MEASURED = {}  # case -> max abs diff, printed by the last test


@pytest.fixture(scope="session")
def oracle(tmp_path_factory):
    """All cases, made by one oracle process per session (shared with the
    converter tests and the other xdist worker): {"dir": ..., "seconds": ...}."""
    return official_cases(tmp_path_factory)


def case_of(name):
    return next(case for case in CASES if case["name"] == name)


def load(oracle, name):
    folder = os.path.join(oracle["dir"], name)
    with np.load(os.path.join(folder, "outputs.npz")) as data:
        outputs = dict(data)
    inputs = {k: outputs.pop(k) for k in ref.INPUT_KEYS}
    weights = ref.read_checkpoint(os.path.join(folder, "model.ckpt-best"))
    return inputs, outputs, weights


class Recording(dict):
    """A weights dict that remembers which names were read."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read = set()

    def __getitem__(self, name):
        self.read.add(name)
        return super().__getitem__(name)


def max_diffs(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    return {
        k: float(np.max(np.abs(np.asarray(ours[k], np.float64) - theirs[k])))
        for k in theirs
    }


@pytest.mark.parametrize("name", CASE_NAMES)
def test_official_outputs_match_numpy(oracle, name):
    inputs, official, weights = load(oracle, name)
    case = case_of(name)
    config = case["config"]
    recording = Recording(weights)
    ours = ref.forward(recording, config, inputs)

    expected_layers = config["num_hidden_layers"] * config["inner_group_num"]
    assert sum(k.startswith("layer_") for k in official) == expected_layers
    assert official["mlm_logits"].shape == (
        case["batch_size"] * case["num_masked"],
        config["vocab_size"],
    )
    assert ("classifier_logits" in official) == bool(case.get("num_labels"))
    diffs = max_diffs(ours, official)
    worst = max(diffs, key=diffs.get)
    MEASURED[name] = diffs[worst]
    assert diffs[worst] <= TOLERANCE, (worst, diffs)

    # Every model variable mattered to the comparison (all were randomized);
    # only the training state was left unread.
    unread = set(weights) - recording.read
    assert all(n == "global_step" or n.endswith(("/adam_m", "/adam_v")) for n in unread)
    # The values are far from the initializer's, so wrong weights would show.
    assert np.std(official["sequence_output"]) > 0.5
    assert np.std(official["mlm_logits"]) > 0.3


def test_official_layout(oracle):
    for case in CASES:
        folder = os.path.join(oracle["dir"], case["name"])
        config = case["config"]
        with open(os.path.join(folder, "variables.json")) as f:
            shapes = json.load(f)
        with open(os.path.join(folder, "albert_config.json")) as f:
            assert json.load(f) == config
        assert sorted(os.listdir(folder)) == [
            "albert_config.json",
            "model.ckpt-best.data-00000-of-00001",
            "model.ckpt-best.index",
            "model.ckpt-best.meta",
            "outputs.npz",
            "variables.json",
        ]
        mapping = "bert/encoder/embedding_hidden_mapping_in/kernel"
        if config["embedding_size"] == config["hidden_size"]:
            assert mapping not in shapes
        else:
            assert shapes[mapping] == [config["embedding_size"], config["hidden_size"]]
        groups = {n.split("/")[3] for n in shapes if "/transformer/" in n}
        assert groups == {f"group_{g}" for g in range(config["num_hidden_groups"])}
        inner = {n.split("/")[4] for n in shapes if "/transformer/" in n}
        assert inner == {f"inner_group_{i}" for i in range(config["inner_group_num"])}
        g0 = "bert/encoder/transformer/group_0/inner_group_0/"
        assert shapes[g0 + "attention_1/self/query/kernel"] == [32, 32]
        assert shapes[g0 + "ffn_1/intermediate/dense/kernel"] == [32, 64]
        assert shapes[g0 + "LayerNorm_1/gamma"] == [32]
        assert shapes["cls/seq_relationship/output_weights"] == [2, 32]
        if case.get("num_labels"):
            assert shapes["output_weights"] == [case["num_labels"], 32]
            assert shapes["output_bias"] == [case["num_labels"]]
        if case.get("optimizer_slots"):
            model = [n for n in shapes if not n.endswith(("/adam_m", "/adam_v"))]
            assert shapes["global_step"] == []
            for n in model:
                if n != "global_step":
                    assert shapes[n + "/adam_m"] == shapes[n + "/adam_v"] == shapes[n]
        else:
            assert not any("adam" in n or n == "global_step" for n in shapes)


def test_hub_module_folders(oracle):
    folder = os.path.join(oracle["dir"], "all_shared")
    plain = ref.read_checkpoint(os.path.join(folder, "model.ckpt-best"))
    for suffix, prefix in (("_hub", ""), ("_hub_prefixed", "module/")):
        hub = folder + suffix
        assert sorted(os.listdir(hub)) == ["assets", "variables"]
        with open(os.path.join(hub, "assets", "albert_config.json")) as f:
            assert json.load(f) == case_of("all_shared")["config"]
        weights = ref.read_checkpoint(os.path.join(hub, "variables", "variables"))
        assert sorted(weights) == sorted(prefix + n for n in plain)
        for n, value in plain.items():
            assert np.array_equal(weights[prefix + n], value)


FOREIGN = "v1_dropout_classifier"


def foreign_checkpoint(oracle, folder):
    """`run`'s job on a checkpoint it did not write, and that checkpoint's
    weights. New values, written by plain TF ops with no graph or Saver of the
    official code behind them; training state left out on purpose."""
    import tensorflow as tf

    inputs, _, weights = load(oracle, FOREIGN)
    rng = np.random.RandomState(123)
    weights = {
        n: (v + 0.05 * rng.randn(*v.shape)).astype(v.dtype)
        for n, v in weights.items()
        if n != "global_step" and not n.endswith(("/adam_m", "/adam_v"))
    }
    names = sorted(weights)
    prefix = str(folder / "foreign" / "model.ckpt")
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(weights[n]) for n in names],
    )
    config = folder / "albert_config.json"
    config.write_text(json.dumps(case_of(FOREIGN)["config"]))
    np.savez(folder / "inputs.npz", **inputs)
    job = ["run", "--ckpt", prefix, "--config", str(config)]
    job += ["--inputs", str(folder / "inputs.npz"), "--out", str(folder / "out.npz")]
    return job + ["--num_labels", "3"], weights


def missing_variables_job(oracle, folder):
    """`run` on the all_shared checkpoint, which has no inner_group_1 for
    the inner_groups_2 config it is given."""
    inputs, _, _ = load(oracle, "all_shared")
    np.savez(folder / "inputs.npz", **inputs)
    config = folder / "albert_config.json"
    config.write_text(json.dumps(case_of("inner_groups_2")["config"]))
    ckpt = os.path.join(oracle["dir"], "all_shared", "model.ckpt-best")
    job = ["run", "--ckpt", ckpt]
    job += ["--config", str(config), "--inputs", str(folder / "inputs.npz")]
    return job + ["--out", str(folder / "out.npz")]


@pytest.fixture(scope="module")
def runs(oracle, tmp_path_factory):
    """Both `run` tests' jobs, in one oracle Python (one TensorFlow start-up):
    {"foreign": ..., "missing": ...}, each with its folder, returncode, stderr."""
    folders = {k: tmp_path_factory.mktemp(k) for k in ("foreign", "missing")}
    foreign_job, weights = foreign_checkpoint(oracle, folders["foreign"])
    jobs = [foreign_job, missing_variables_job(oracle, folders["missing"])]
    (folders["missing"] / "jobs.json").write_text(json.dumps(jobs))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, RUNS, str(folders["missing"] / "jobs.json")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    foreign, missing = json.loads(result.stdout.strip().splitlines()[-1])
    foreign.update(folder=folders["foreign"], weights=weights)
    missing.update(folder=folders["missing"])
    return {"foreign": foreign, "missing": missing}


def test_run_restores_a_foreign_checkpoint(oracle, runs):
    """`run` computes the official outputs of a checkpoint it did not write."""
    job = runs["foreign"]
    assert job["returncode"] == 0, f"official oracle failed:\n{job['stderr'][-3000:]}"
    with np.load(job["folder"] / "out.npz") as data:
        official = dict(data)
    inputs, _, _ = load(oracle, FOREIGN)
    ours = ref.forward(job["weights"], case_of(FOREIGN)["config"], inputs)
    diffs = max_diffs(ours, official)
    assert max(diffs.values()) <= TOLERANCE, diffs


def test_run_refuses_a_checkpoint_missing_variables(runs):
    job = runs["missing"]
    assert job["returncode"] != 0
    assert "missing variables" in job["stderr"]
    assert "group_0/inner_group_1/attention_1/self/query/kernel" in job["stderr"]
    assert not (job["folder"] / "out.npz").exists()


def not_shared(layer_idx, inner_idx, part):
    del part
    return f"encoder/layer_{layer_idx}/inner_{inner_idx}/"


def attention_shared(layer_idx, inner_idx, part):
    if part == ref.ATTENTION:
        return f"encoder/shared_attention/inner_{inner_idx}/"
    return f"encoder/layer_{layer_idx}/ffn_inner_{inner_idx}/"


@pytest.mark.parametrize(
    "name, layout, changed_layer",
    [("l5_g2_inner2", not_shared, 3), ("inner_groups_2", attention_shared, 1)],
)
def test_param_prefix_layouts(oracle, name, layout, changed_layer):
    """Other sharing layouts through param_prefix (for the Keras model's tests)."""
    inputs, official, weights = load(oracle, name)
    config = case_of(name)["config"]
    inner_groups = config["inner_group_num"]
    relaid = ref.relayout(weights, config, layout)
    assert not any("/transformer/" in n for n in relaid)
    same = ref.forward(relaid, config, inputs, param_prefix=layout)
    expected = ref.forward(weights, config, inputs)
    for k in expected:
        assert np.array_equal(same[k], expected[k]), k
    assert max_diffs(same, official)["sequence_output"] <= TOLERANCE
    # Give one layer's FFN its own new values: the layers before it are
    # unchanged, that layer and the later ones change.
    ffn = layout(changed_layer, 0, ref.FFN) + "ffn_1/intermediate/dense/kernel"
    relaid[ffn] = relaid[ffn] + 0.1
    changed = ref.forward(relaid, config, inputs, param_prefix=layout)
    for k in range(config["num_hidden_layers"] * inner_groups):
        equal = np.array_equal(changed[f"layer_{k}"], expected[f"layer_{k}"])
        assert equal == (k < changed_layer * inner_groups), k


def test_relayout_refuses_a_layout_sharing_more(oracle):
    # Two groups' attention weights cannot become one shared attention.
    _, _, weights = load(oracle, "l5_g2_inner2")
    with pytest.raises(ValueError, match="two different values"):
        ref.relayout(weights, case_of("l5_g2_inner2")["config"], attention_shared)


def test_zz_report(oracle, capsys):
    with capsys.disabled():
        print(
            f"\nofficial oracle made {len(CASES)} cases in {oracle['seconds']:.1f}s;"
            " max abs diff vs NumPy float64: "
            + json.dumps({k: f"{v:.1e}" for k, v in MEASURED.items()})
        )
