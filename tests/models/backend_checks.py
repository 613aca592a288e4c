"""Run in a subprocess with KERAS_BACKEND=jax or torch: several checks in one
fresh Python (each fresh Python pays seconds of imports).

Usage: python backend_checks.py WORK_DIR CHECK [CHECK ...]

Each CHECK is a function below; its JSON result, or the traceback that
stopped it, goes to WORK_DIR/report.json under its name, so the tests that
read the report fail one by one. Larger results go to WORK_DIR as .npz.
"""

import contextlib
import io
import json
import os
import sys
import traceback

import keras
import numpy as np

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer

HERE = os.path.dirname(os.path.abspath(__file__))


def forward(work, sharing):
    """A forward pass from the weights and inputs the test saved."""
    with open(os.path.join(work, f"config_{sharing}.json")) as f:
        config = AlbertConfig.from_dict(json.load(f))
    with _counting_sampler() as sampled:
        model = AlbertPretrainer(AlbertBackbone(config))
    weights = np.load(os.path.join(work, f"w_{sharing}.npz"))
    model.set_weights([weights[f"w{i}"] for i in range(len(weights.files))])
    x = dict(np.load(os.path.join(work, "x.npz")))
    out = model(x, training=False)
    seq = model.backbone(x, training=False)
    np.savez(
        os.path.join(work, f"out_{sharing}.npz"),
        sequence_output=keras.ops.convert_to_numpy(seq["sequence_output"]),
        pooled_output=keras.ops.convert_to_numpy(seq["pooled_output"]),
        mlm_logits=keras.ops.convert_to_numpy(out["mlm_logits"]),
        sop_logits=keras.ops.convert_to_numpy(out["sop_logits"]),
    )
    return {"compiled_samplers": len(sampled)}


@contextlib.contextmanager
def _counting_sampler():
    """The shapes JAX's compiled truncated-normal sampler drew while in it
    (each new one an XLA compilation); nothing counted on other backends."""
    sampled = []
    if keras.backend.backend() != "jax":
        yield sampled
        return
    import jax

    original = jax.random.truncated_normal

    def counted(*args, shape=None, **kwargs):
        sampled.append(shape)
        return original(*args, shape=shape, **kwargs)

    jax.random.truncated_normal = counted
    try:
        yield sampled
    finally:
        jax.random.truncated_normal = original


def forward_all(work):
    return forward(work, "all")


def forward_ffn(work):
    return forward(work, "ffn")


def _tiny_backbone():
    return AlbertBackbone(AlbertConfig.from_preset("albert_tiny", vocab_size=60))


def fit(work):
    """The classifier learns, and SQuAD 2.0 and the pretrainer fit."""
    from albert_keras import AlbertClassifier, AlbertSquadV2

    jit = keras.backend.backend() != "torch"  # torch.compile is another matter
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(5, 60, (32, 12)).astype("int32"),
        "segment_ids": np.zeros((32, 12), "int32"),
        "padding_mask": np.ones((32, 12), "int32"),
    }
    y = (x["token_ids"][:, 0] > 30).astype("int32")
    model = AlbertClassifier(_tiny_backbone(), num_classes=2)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        jit_compile=jit,
        loss={"logits": keras.losses.SparseCategoricalCrossentropy(True)},
    )
    history = model.fit(x, {"logits": y}, batch_size=8, epochs=8, verbose=0)
    model.evaluate(x, {"logits": y}, verbose=0)
    squad = AlbertSquadV2(_tiny_backbone(), start_n_top=2, end_n_top=2)
    loss, weights = AlbertSquadV2.official_losses()
    squad.compile(optimizer="adam", loss=loss, loss_weights=weights, jit_compile=jit)
    x = dict(x, p_mask=np.zeros((32, 12), "int32"))
    x["start_positions"] = np.full(32, 3, "int32")
    t = {
        "start_log_probs": x["start_positions"],
        "end_log_probs": x["start_positions"],
        "cls_logits": np.zeros(32, "float32"),
    }
    squad.fit(x, t, batch_size=8, epochs=1, verbose=0)
    shape = squad.predict(x, verbose=0)["end_top_index"].shape
    pretrainer = AlbertPretrainer(_tiny_backbone())
    pretrainer.compile(optimizer="adam", jit_compile=jit)
    x = {k: x[k] for k in ("token_ids", "segment_ids", "padding_mask")}
    x["mask_positions"] = np.tile(np.array([[1, 2]], "int32"), (32, 1))
    t = {
        "mask_ids": x["token_ids"][:, 1:3],
        "mask_weights": np.ones((32, 2), "float32"),
        "sop_labels": np.zeros(32, "int32"),
    }
    pretrainer.fit(x, t, batch_size=8, epochs=1, verbose=0)
    return {"losses": history.history["loss"], "end_top_index_shape": list(shape)}


def bi_encoder(work):
    """`AlbertBiEncoder` and `InBatchNegativesLoss` on the inputs and weights
    the test saved; then a few fit steps."""
    from albert_keras.models import AlbertBiEncoder
    from albert_keras.training import InBatchNegativesLoss

    with open(os.path.join(work, "config_ffn.json")) as f:  # the test's last
        config = AlbertConfig.from_dict(json.load(f))
    model = AlbertBiEncoder(AlbertBackbone(config))
    weights = np.load(os.path.join(work, "bi_w.npz"))
    model.backbone.set_weights([weights[f"w{i}"] for i in range(len(weights.files))])
    x = dict(np.load(os.path.join(work, "bi_x.npz")))
    embeddings = model(x, training=False)["embeddings"]
    loss = InBatchNegativesLoss(scale=5.0, symmetric=True)
    value = float(keras.ops.convert_to_numpy(loss([0, 1, 1], embeddings)))
    np.savez(
        os.path.join(work, "bi_out.npz"),
        embeddings=keras.ops.convert_to_numpy(embeddings),
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss={"embeddings": loss},
        jit_compile=keras.backend.backend() != "torch",
    )
    ids = np.array([0, 1, 1], "int32")
    history = model.fit(x, ids, batch_size=3, epochs=4, verbose=0)
    return {"loss": value, "losses": history.history["loss"]}


def accumulation(work):
    """Gradient accumulation vs one large batch (tests/accumulation_runs.py)."""
    sys.path.insert(0, os.path.dirname(HERE))
    from accumulation_runs import accumulation_differences

    cases = (("adamw", 2), ("lamb", 2))  # Keras' schedule gap: the TF test
    jit = keras.backend.backend() != "torch"  # torch.compile is another matter
    return accumulation_differences(cases, jit_compile=jit, keras_schedule=False)


def pretrain_accumulation(work):
    """`run_pretraining` accumulating 2 batches of 4 vs batches of 8."""
    sys.path.insert(0, os.path.dirname(HERE))
    from accumulation_runs import pretraining_differences

    return pretraining_differences(work, jit_compile=keras.backend.backend() == "jax")


def squad_predict(work):
    """SQuAD 2.0 predicts with and without `start_positions` alike."""
    from albert_keras import AlbertSquadV2

    model = AlbertSquadV2(_tiny_backbone(), start_n_top=2, end_n_top=2)
    keys = ("token_ids", "segment_ids", "padding_mask")
    x = {k: np.ones((3, 8), "int32") for k in keys}
    x["p_mask"] = np.zeros((3, 8), "int32")
    out = model.predict(x, batch_size=2, verbose=0)  # no start_positions: 0
    same = model.predict(dict(x, start_positions=np.zeros(3, "int32")), verbose=0)
    close = np.allclose(out["end_top_log_probs"], same["end_top_log_probs"], atol=1e-6)
    return {
        "close": bool(close),
        "end_top_index_shape": list(out["end_top_index"].shape),
    }


def failed_loops(work):
    """After a `predict`, `evaluate` and `fit` that raise (a sequence longer
    than the position table; a label of the wrong shape), the model computes
    as before and trains: max abs diff of the logits, and the messages; with
    and without `jit_compile`. Then how many of the weights' values before a
    `fit` without `jit_compile` are still alive after each of its steps."""
    return {
        "jit": _failed_loops(jit_compile=True),
        "no_jit": _failed_loops(jit_compile=False),
        "alive": _values_alive_during_fit(),
    }


def _classifier(jit_compile):
    from albert_keras import AlbertClassifier

    model = AlbertClassifier(_tiny_backbone(), num_classes=2)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(True),
        jit_compile=jit_compile,
    )
    return model


def _values_alive_during_fit():
    import gc
    import weakref

    model = _classifier(jit_compile=False)
    model.optimizer.build(model.trainable_variables)
    before = [weakref.ref(v.value) for v in model.trainable_variables]
    alive = []

    class Count(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            gc.collect()
            alive.append(sum(ref() is not None for ref in before))

    x = {k: np.ones((4, 8), "int32") for k in ("token_ids", "padding_mask")}
    x["segment_ids"] = np.zeros((4, 8), "int32")
    model.fit(x, np.zeros(4), batch_size=2, verbose=0, callbacks=[Count()])
    return {"alive": alive, "weights": len(before)}


def _failed_loops(jit_compile):
    model = _classifier(jit_compile)
    x = {k: np.ones((2, 8), "int32") for k in ("token_ids", "padding_mask")}
    x["segment_ids"] = np.zeros((2, 8), "int32")
    long = {k: np.ones((1, 200), "int32") for k in x}
    before = keras.ops.convert_to_numpy(model(x)["logits"])
    result = {"messages": [], "diffs": []}
    for run in (
        lambda: model.predict(long, verbose=0),
        lambda: model.evaluate(long, np.zeros(1), verbose=0),
        lambda: model.fit(x, np.zeros((2, 5)), verbose=0),
    ):
        try:
            run()
            result["messages"].append("no error")
        except ValueError as e:
            result["messages"].append(str(e)[:300])
        after = keras.ops.convert_to_numpy(model(x)["logits"])
        result["diffs"].append(float(np.max(np.abs(after - before))))
    result["loss"] = model.fit(x, np.zeros(2), verbose=0).history["loss"][0]
    # `train_on_batch` leaves its state on the model; weights set since then
    # are the ones a failed loop keeps (that state was put back instead).
    weights = model.get_weights()
    model.train_on_batch(x, np.zeros(2))
    model.set_weights(weights)
    before = keras.ops.convert_to_numpy(model(x)["logits"])
    for run in (
        lambda: model.predict(long, verbose=0),
        lambda: model.fit(x, np.zeros((2, 5)), verbose=0),
    ):
        try:
            run()
        except ValueError:
            pass
        after = keras.ops.convert_to_numpy(model(x)["logits"])
        result["diffs"].append(float(np.max(np.abs(after - before))))
    return result


def input_ranges(work):
    """The messages for ids outside the tables: JAX's gathers clamp an id
    that is too large and wrap a negative one, so without the check these
    calls returned garbage without an error."""
    model = AlbertPretrainer(_tiny_backbone())
    x = {k: np.ones((1, 4), "int32") for k in ("token_ids", "padding_mask")}
    x["segment_ids"] = np.zeros((1, 4), "int32")
    x["mask_positions"] = np.array([[1]])
    bad = {
        "negative position": {**x, "mask_positions": np.array([[-1]])},
        "position past the end": {**x, "mask_positions": np.array([[4]])},
        "token id past the vocabulary": {**x, "token_ids": np.full((1, 4), 10**6)},
    }
    messages = {}
    for name, inputs in bad.items():
        for how, run in (("call", model), ("predict", model.predict)):
            try:
                run(inputs)
                messages[f"{name}, {how}"] = "no error"
            except ValueError as e:
                messages[f"{name}, {how}"] = str(e)[:300]
    return messages


def text_model(work):
    """The messages of `with_tokenizer` for a classifier and a span model."""
    from albert_keras import AlbertClassifier, AlbertSpanQA
    from albert_keras.models import with_tokenizer
    from albert_keras.sample_text import SPM_MODEL_PATH

    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    messages = []
    for model in (
        AlbertClassifier(AlbertBackbone(config), 2),
        AlbertSpanQA(AlbertBackbone(config)),
    ):
        try:
            with_tokenizer(model, SPM_MODEL_PATH, 16)
        except ValueError as e:
            messages.append(str(e))
    return {"messages": messages}


def task_export(work):
    """README's `task.fit(...); task.export("savedmodel")`, export=False."""
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks import ClassificationTask

    texts = ["Fine.", "Dull.", "Witty."]
    rows = [{"text": t, "label": i % 2} for i, t in enumerate(texts)]
    task = ClassificationTask(num_classes=2, text_fields=("text",), sequence_length=16)
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    run = os.path.join(work, "task_run")
    task.fit(AlbertBackbone(config), rows, rows, run, vocab=SPM_MODEL_PATH,
             epochs=1, batch_size=4, export=False)  # fmt: skip
    task.export(os.path.join(work, "task_savedmodel"))
    return {}


def eval_every(work):
    """`task.fit(max_steps=3, eval_every=1)` on 2 batches an epoch: the last
    evaluation stops `fit` inside its stretch (`StopAfterBatches`)."""
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks import ClassificationTask

    rows = [
        {"text": t, "label": i % 2} for i, t in enumerate(["Fine.", "Dull.", "Witty."])
    ]
    task = ClassificationTask(num_classes=2, sequence_length=16)
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    run = os.path.join(work, "steps_run")
    result = task.fit(AlbertBackbone(config), rows, rows, run, vocab=SPM_MODEL_PATH,
                      max_steps=3, eval_every=1, batch_size=2, export=False,
                      verbose=0)  # fmt: skip
    iterations = keras.ops.convert_to_numpy(task.model.optimizer.iterations)
    # best.keras (loaded at the end) holds the optimizer of the best evaluation.
    return {
        "steps": result["epochs"]["step"],
        "best_step": result["best_step"],
        "iterations": int(iterations),
    }


def remat_dropout(work):
    """`task.fit(gradient_checkpointing=True)` over a backbone with dropout
    and the same run without it (a dropout draw inside `jax.checkpoint` once
    leaked a tracer): the losses and the largest weight difference."""
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tasks import ClassificationTask

    rows = [{"text": f"word {i} " * (1 + i % 4), "label": i % 2} for i in range(8)]
    config = AlbertConfig.from_preset(
        "albert_tiny", vocab_size=8000, hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )  # fmt: skip
    runs = []
    for remat in (False, True):
        task = ClassificationTask(num_classes=2, sequence_length=16)
        keras.utils.set_random_seed(0)
        result = task.fit(AlbertBackbone(config), rows, rows,
                          os.path.join(work, f"remat_{remat}"), vocab=SPM_MODEL_PATH,
                          epochs=2, batch_size=4, export=False,
                          gradient_checkpointing=remat, verbose=0)  # fmt: skip
        runs.append((result["epochs"]["loss"], task.model.get_weights()))
    (plain, plain_weights), (losses, weights) = runs
    moved = [np.max(np.abs(a - b)) for a, b in zip(plain_weights, weights, strict=True)]
    return {"plain": plain, "losses": losses, "max_diff": float(max(moved))}


def _cli(argv):
    """`albert-keras ARGV` here: its exit status and what it printed."""
    from albert_keras.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(argv)
    return code, printed.getvalue()


def finetune(work):
    """`albert-keras finetune` on a few examples; on JAX `export` (LiteRT)
    runs too, and `export_litert` here names the TensorFlow backend."""
    data = os.path.join(os.path.dirname(HERE), "data", "tasks", "rt_sentiment")
    out = os.path.join(work, "run")
    argv = ["finetune", "--task", "classify", "--init", "albert_tiny"]
    argv += ["--epochs", "1", "--train", os.path.join(data, "train.jsonl")]
    argv += ["--dev", os.path.join(data, "dev.jsonl"), "--output-dir", out]
    argv += ["--max-train-examples", "32", "--max-dev-examples", "16"]
    argv += ["--max-seq-length", "32", "--batch-size", "16"]
    code, printed = _cli(argv)
    result = {"code": code, "stdout": printed}
    if keras.backend.backend() != "jax" or code != 0:
        return result
    # `export` converts in a TensorFlow process; the Python function says so.
    result["export_code"], _ = _cli(["export", "--model", out, "--no-check"])
    from albert_keras.models.litert_export import export_litert

    model = keras.saving.load_model(os.path.join(out, "best.keras"))
    try:
        export_litert(model, os.path.join(work, "x.tflite"))
        result["litert_message"] = ""
    except ValueError as e:
        result["litert_message"] = str(e)
    return result


def fill_mask(work):
    """`albert-keras fill-mask` on JAX: a pretrainer saved here, filled in a
    TensorFlow process (the tokenizer's ops are TensorFlow's)."""
    import shutil

    from albert_keras.sample_text import SPM_MODEL_PATH

    folder = os.path.join(work, "pretrain_run")
    os.makedirs(folder, exist_ok=True)
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    AlbertPretrainer(AlbertBackbone(config)).save(
        os.path.join(folder, "pretrainer.keras")
    )
    shutil.copy(SPM_MODEL_PATH, os.path.join(folder, "vocab.model"))
    out = os.path.join(work, "fill.jsonl")
    code, _ = _cli(["fill-mask", "Emma was [MASK] of it.", "--init", folder,
                    "--output", out])  # fmt: skip
    return {"code": code}


def main(work, names):
    report = {"backend": keras.backend.backend()}
    for name in names:
        try:
            report[name] = globals()[name](work)
        except BaseException:  # noqa: BLE001 (reported to the test that reads it)
            report[name] = {"error": traceback.format_exc()}
        keras.backend.clear_session()
    with open(os.path.join(work, "report.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
