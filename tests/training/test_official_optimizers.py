"""The official-update optimizers against the official TF1 ones.

`FastLamb(official_update=True)` against `lamb_optimizer.LAMBOptimizer`,
`OfficialAdamW` against `optimization.AdamWeightDecayOptimizer`, both run by
the official code in TF1 graph mode.
"""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from albert_keras.training import FastLamb, OfficialAdamW, create_optimizer
from albert_keras.training.optimizers import NO_DECAY

ORACLE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "oracle")

# TF1 names (the official exclusion regexes match LayerNorm and bias) and ours.
VARIABLES = {
    "encoder/attention/dense/kernel": "kernel",
    "encoder/attention/dense/bias": "bias",
    "encoder/LayerNorm/gamma": "gamma",
    "encoder/LayerNorm/beta": "beta",
    "embeddings/word_embeddings": "embeddings",
}
STEPS, RATE, DECAY = 5, 0.01, 0.1
OFFICIAL = {
    "lamb": "lamb_optimizer.LAMBOptimizer",
    "adamw": "optimization.AdamWeightDecayOptimizer",
}


def start_values(rng):
    shapes = {"kernel": (6, 4), "bias": (4,), "gamma": (4,), "beta": (4,)}
    values = {k: rng.normal(size=shapes.get(k, (10, 4))) for k in VARIABLES.values()}
    values["gamma"] += 1.0
    values["beta"] *= 0.0  # zero at the start, as LayerNorm's beta is
    grads = [
        {k: rng.normal(size=v.shape) * (s + 1) for k, v in values.items()}
        for s in range(STEPS)
    ]
    return values, grads


def official_values(runs, tmp_path):
    """Each run's official optimizer's variables after the steps (TF1 graph
    mode), from one subprocess: `runs` maps a name to (optimizer, values,
    grads); one TensorFlow start-up for all."""
    for name, (_, values, grads) in runs.items():
        np.savez(tmp_path / f"{name}-values.npz", **values)
        np.savez(
            tmp_path / f"{name}-grads.npz",
            **{f"{s}/{k}": g for s, d in enumerate(grads) for k, g in d.items()},
        )
    # {name: the official class}, as Python source for the script.
    optimizers = ", ".join(
        f"{name!r}: {OFFICIAL[run[0]]}" for name, run in runs.items()
    )
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {ORACLE_DIR!r})
        import tf1_compat
        import numpy as np
        from albert import lamb_optimizer, optimization
        tf = tf1_compat.tf1
        for run, official in {{{optimizers}}}.items():
            with tf.Graph().as_default():
                values = np.load(run + "-values.npz")
                grads = np.load(run + "-grads.npz")
                variables = {{
                    ours: tf.get_variable(
                        name, initializer=values[ours].astype("float32")
                    )
                    for name, ours in {VARIABLES!r}.items()
                }}
                holders = {{
                    k: tf.placeholder(tf.float32, v.shape)
                    for k, v in variables.items()
                }}
                optimizer = official(
                    learning_rate={RATE},
                    weight_decay_rate={DECAY},
                    beta_1=0.9,
                    beta_2=0.999,
                    epsilon=1e-6,
                    exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
                )
                pairs = [(holders[k], variables[k]) for k in variables]
                train = optimizer.apply_gradients(pairs)
                with tf.Session() as session:
                    session.run(tf.global_variables_initializer())
                    for s in range({STEPS}):
                        feed = {{
                            holders[k]: grads[f"{{s}}/{{k}}"] for k in variables
                        }}
                        session.run(train, feed)
                    np.savez(run + "-official.npz", **session.run(variables))
        """
    )
    subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        cwd=str(tmp_path),
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )
    return {name: dict(np.load(tmp_path / f"{name}-official.npz")) for name in runs}


@pytest.fixture(scope="module")
def official_runs(tmp_path_factory):
    """The official LAMB (seed 0) and AdamWeightDecay (seed 1) runs: their
    start values, gradients and results, from one TF1 subprocess."""
    runs = {
        "lamb": ("lamb", *start_values(np.random.default_rng(0))),
        "adamw": ("adamw", *start_values(np.random.default_rng(1))),
    }
    results = official_values(runs, tmp_path_factory.mktemp("official"))
    return {name: (run[1], run[2], results[name]) for name, run in runs.items()}


def keras_values(values, grads, cls=FastLamb, **kwargs):
    variables = {
        k: keras.Variable(v.astype("float32"), name=k) for k, v in values.items()
    }
    optimizer = cls(learning_rate=RATE, weight_decay=DECAY, epsilon=1e-6, **kwargs)
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    for step in grads:
        optimizer.apply(
            [step[k].astype("float32") for k in variables], list(variables.values())
        )
    return {k: keras.ops.convert_to_numpy(v) for k, v in variables.items()}


def test_official_update_equals_the_official_lamb(official_runs):
    values, grads, official = official_runs["lamb"]
    ours = keras_values(values, grads, official_update=True)
    for name in VARIABLES.values():
        moved = np.max(np.abs(official[name] - values[name]))
        assert moved > 1e-3, name  # every variable moved
        assert np.max(np.abs(ours[name] - official[name])) < 1e-6 * (1 + moved), name
    # Keras's own LAMB update is another algorithm: it must differ visibly.
    keras_lamb = keras_values(values, grads)
    assert max(np.max(np.abs(keras_lamb[k] - official[k])) for k in official) > 1e-3


def test_official_adamw_equals_the_official_adam_weight_decay(official_runs):
    values, grads, official = official_runs["adamw"]
    ours = keras_values(values, grads, OfficialAdamW)
    for name in VARIABLES.values():
        moved = np.max(np.abs(official[name] - values[name]))
        assert moved > 1e-3, name
        assert np.max(np.abs(ours[name] - official[name])) < 1e-6 * (1 + moved), name
    # Keras's AdamW (bias-corrected) is visibly another update.
    keras_adamw = keras_values(values, grads, keras.optimizers.AdamW)
    assert max(np.max(np.abs(keras_adamw[k] - official[k])) for k in official) > 1e-3
    with pytest.raises(ValueError, match="no amsgrad"):
        OfficialAdamW(amsgrad=True)


def test_create_optimizer_lamb_official_round_trips():
    optimizer = create_optimizer("lamb_official", 1e-3, 100, 10, weight_decay=0.02)
    assert isinstance(optimizer, FastLamb) and optimizer.official_update
    restored = FastLamb.from_config(optimizer.get_config())
    assert restored.official_update and restored.weight_decay == 0.02
    adamw = create_optimizer("adamw_official", 1e-3, 100, 10)
    assert isinstance(adamw, OfficialAdamW) and adamw.global_clipnorm == 1.0
    assert isinstance(OfficialAdamW.from_config(adamw.get_config()), OfficialAdamW)
    allowed = "Allowed: lamb, lamb_official, adamw, adamw_official"
    with pytest.raises(ValueError, match=allowed):
        create_optimizer("lars")
