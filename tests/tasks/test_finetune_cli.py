"""Every task end to end on the task data of tests/data, with a tiny model."""

import json
import os

import keras
import numpy as np
import pytest
from albert_test_case import TINY_FINETUNING, max_abs_diff
from albert_test_case import task_file as _task

from albert_keras.cli import main
from albert_keras.tasks import MultipleChoiceTask, Task, task_from_name
from albert_keras.tasks.finetuning_run import run_finetuning
from albert_keras.tasks.prediction_run import run_prediction

# The task's packed length (a field of its config); the run's options.
LENGTH = 48
# Without XLA (its compilation costs more than these tiny runs); the CLI test
# and test_readme_python train with it (the default). Two epochs: enough for
# the loss to fall, and each epoch costs a dev scoring and the run's saves.
FAST = dict(
    TINY_FINETUNING, epochs=2, patience=2, max_train_examples=96, max_dev_examples=64
)
# SQuAD's questions make several windows each: half as many questions.
SQUAD = dict(FAST, max_train_examples=48, max_dev_examples=32)


def _check_run(result, output_dir):
    """Training loss falls; the files are written; best.keras is the best epoch;
    settings.json holds the task's config, which rebuilds the same task."""
    losses = result["epochs"]["loss"]
    assert losses[-1] < losses[0], losses
    names = ("best.keras", "metrics.json", "settings.json", "curves.png", "history.csv")
    for name in names:
        assert os.path.isfile(os.path.join(output_dir, name)), name
    assert os.listdir(os.path.join(output_dir, "logs"))
    with open(os.path.join(output_dir, "metrics.json")) as f:
        assert json.load(f)["best"] == pytest.approx(result["best"])
    with open(os.path.join(output_dir, "settings.json")) as f:
        settings = json.load(f)
    assert settings["task"] == json.loads(json.dumps(result["task"]))
    assert Task.from_config(settings["task"]).get_config() == result["task"]
    monitor = result["epochs"]["val_" + result["monitor"]]
    assert result["best"][result["monitor"]] == max(monitor)


def _dev_accuracy(model_path, result, dev, tokenizer):
    """best.keras on the run's dev draw, packed by the task_datasets pipelines."""
    from albert_keras.tasks.task_datasets import choice_dataset, text_dataset

    task = Task.from_config(result["task"])  # the run's label set and fields
    examples = task.read(dev).subset(FAST["max_dev_examples"], 0).examples
    make = choice_dataset if isinstance(task, MultipleChoiceTask) else text_dataset
    model = keras.saving.load_model(model_path)
    length = task.config.sequence_length
    logits = model.predict(make(examples, tokenizer, length, 16), verbose=0)["logits"]
    accuracy = float(np.mean(np.argmax(logits, -1) == [e["label"] for e in examples]))
    return accuracy, examples, logits


def _check_predictions(out, dev, result):
    """`albert-keras predict` on the dev draw scores what the run's best epoch did."""
    predicted = run_prediction(out, dev, max_examples=FAST["max_dev_examples"])
    assert predicted["task"] == result["task"]  # from the run's settings.json
    assert predicted["examples"] == FAST["max_dev_examples"]
    assert predicted["metrics"], predicted
    for key, value in predicted["metrics"].items():
        if key in result["best"]:
            # float32 noise: the tiny model's regression scores are nearly
            # constant (Pearson ~0.02), so the last bits of the scores move
            # the correlations by ~1e-4; the MSE stays within 1e-4.
            tolerance = 1e-3 if key in ("pearson", "spearman") else 1e-4
            assert value == pytest.approx(result["best"][key], abs=tolerance), key
    with open(predicted["predictions"].replace(".jsonl", ".metrics.json")) as f:
        assert json.load(f)["metrics"] == pytest.approx(predicted["metrics"])
    return predicted


# Three-way choice learns slowest from a random tiny model: more steps on
# fewer examples, at a higher rate.
# Its run also exports the text-in SavedModel (checked against the packed data).
CHOICE = dict(
    learning_rate=1e-2, max_train_examples=32, epochs=6, patience=6, export=True
)


@pytest.mark.parametrize(
    "task, name, changes",
    [
        ("classify", "rt_sentiment", {}),
        ("pair", "vitaminc", {}),
        ("choice", "social_iqa", CHOICE),
    ],
)
def test_classification_tasks(tmp_path, task, name, changes):
    from albert_keras.sample_text import SPM_MODEL_PATH
    from albert_keras.tokenizers import AlbertTokenizer

    out = str(tmp_path / task)
    result = run_finetuning(
        task_from_name(task, sequence_length=LENGTH),
        _task(name, "train.jsonl"),
        _task(name, "dev.jsonl"),
        output_dir=out,
        **dict(FAST, **changes),
    )
    _check_run(result, out)
    assert set(result["best"]) >= {"accuracy", "f1", "mcc", "loss"}
    baseline = result["baselines"]["majority_class"]["accuracy"]
    assert 0.2 < baseline < 0.7
    labels = result["task"]["config"].get("labels")
    # The kept model scores what the run reported for its best epoch.
    accuracy, examples, logits = _dev_accuracy(
        os.path.join(out, "best.keras"),
        result,
        _task(name, "dev.jsonl"),
        AlbertTokenizer(SPM_MODEL_PATH),
    )
    assert accuracy == pytest.approx(result["best"]["accuracy"])
    # `predict` on the same dev draw: the run's scores, a line per example
    # with the label of the highest logit and softmax probabilities.
    predicted = _check_predictions(out, _task(name, "dev.jsonl"), result)
    with open(predicted["predictions"]) as f:
        lines = [json.loads(line) for line in f]
    assert [p["line"] for p in lines] == [e["line"] for e in examples]
    softmax = np.exp(logits - logits.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    for p, row, probabilities in zip(lines, logits, softmax, strict=True):
        if task == "choice":
            assert p["label"] == int(np.argmax(row))
            np.testing.assert_allclose(p["probabilities"], probabilities, atol=1e-5)
        else:
            assert p["label"] == labels[int(np.argmax(row))]
            served = [p["probabilities"][str(n)] for n in labels]
            np.testing.assert_allclose(served, probabilities, atol=1e-5)
    if task == "classify":
        # Records without a label are predicted too (the same answers), and
        # then nothing is scored.
        unlabelled = tmp_path / "unlabelled.jsonl"
        with open(_task(name, "dev.jsonl")) as f:
            records = [json.loads(line) for line in f]
        with open(unlabelled, "w") as f:
            for record in records:
                record.pop("label")
                f.write(json.dumps(record) + "\n")
        blind = run_prediction(
            out, str(unlabelled), max_examples=FAST["max_dev_examples"]
        )
        assert blind["metrics"] is None and blind["labelled"] == 0
        with open(blind["predictions"]) as f:
            assert [json.loads(line)["label"] for line in f] == [
                p["label"] for p in lines
            ]
    if task == "choice":
        # The SavedModel takes the raw context and options: the same scores as
        # best.keras on choice_dataset's packing.
        import tensorflow as tf

        loaded = tf.saved_model.load(os.path.join(out, "savedmodel"))
        served = loaded.serve(
            tf.constant([e["context"] for e in examples]),
            tf.constant([e["options"] for e in examples]),
        )["logits"]
        assert served.shape == logits.shape == (len(examples), 3)
        np.testing.assert_allclose(served, logits, atol=1e-5)


def test_regression_task(tmp_path):
    out = str(tmp_path / "regress")
    result = run_finetuning(
        task_from_name("regress", sequence_length=LENGTH),
        _task("rt_sentiment", "train.jsonl"),
        _task("rt_sentiment", "dev.jsonl"),
        output_dir=out,
        **FAST,
    )
    _check_run(result, out)
    assert result["monitor"] == "pearson"
    assert result["task"]["config"]["num_classes"] == 1
    assert set(result["best"]) >= {"pearson", "spearman", "mse"}
    _check_predictions(out, _task("rt_sentiment", "dev.jsonl"), result)
    assert result["baselines"]["train_mean"]["pearson"] == 0.0


@pytest.mark.parametrize("head", ["simple", "v2"])
def test_squad_heads(tmp_path, head):
    out = str(tmp_path / "squad")
    task = task_from_name(
        "squad",
        head=head,
        sequence_length=96,
        # v2 also drops half the windows without an answer (the null ones),
        # and thresholds the span-adjusted no-answer score: `predict` and
        # savedmodel/ must use the same one.
        null_window_fraction=0.5 if head == "v2" else 1.0,
        null_score="span_adjusted" if head == "v2" else "official",
    )
    result = run_finetuning(
        task,
        _task("disfl_qa", "train.json"),
        _task("disfl_qa", "dev.json"),
        output_dir=out,
        **dict(SQUAD, export=head == "v2"),
    )
    _check_run(result, out)
    assert {"exact", "f1", "best_f1", "best_f1_thresh"} <= set(result["best"])
    assert result["task"]["config"]["null_score"] == (
        "span_adjusted" if head == "v2" else "official"
    )
    # The 48 questions drawn from tests/data make 249 windows of 96 (stride 64,
    # questions cut to 32), 224 null (squad_features on the same draw).
    if head == "v2":
        assert 25 + 0.35 * 224 < result["train_examples"] < 25 + 0.65 * 224
    else:
        assert result["train_examples"] == 249
    # Every dev question gets an answer or "", by id.
    with open(os.path.join(out, "dev_predictions.json")) as f:
        predictions = json.load(f)
    assert len(predictions) == SQUAD["max_dev_examples"]
    no_answer = result["baselines"]["always_no_answer"]["f1"]
    assert result["best"]["best_f1"] >= no_answer  # a threshold can say "" always
    # `predict` applies dev's best threshold: on the same questions it scores
    # the best F1 (the threshold reproduces it, -inf where "" everywhere won).
    predicted = run_prediction(
        out, _task("disfl_qa", "dev.json"), max_examples=SQUAD["max_dev_examples"]
    )
    assert predicted["task"] == result["task"]
    assert predicted["metrics"]["f1"] == pytest.approx(result["best"]["best_f1"])
    assert predicted["metrics"]["always_no_answer_f1"] == pytest.approx(no_answer)
    with open(os.path.join(out, "dev_null_odds.json")) as f:
        dev_odds = json.load(f)
    threshold = result["best"]["best_f1_thresh"]
    with open(predicted["predictions"]) as f:
        assert json.load(f) == {
            q: ("" if dev_odds[q] > threshold else text)
            for q, text in predictions.items()
        }
    if head == "v2":
        # savedmodel/ answers raw questions as the evaluation did, with the
        # no-answer threshold chosen on dev.
        import tensorflow as tf

        with open(_task("disfl_qa", "dev.json")) as f:
            raw = {
                qa["id"]: (qa["question"], paragraph["context"])
                for article in json.load(f)["data"]
                for paragraph in article["paragraphs"]
                for qa in paragraph["qas"]
            }
        ids = sorted(predictions)
        loaded = tf.saved_model.load(os.path.join(out, "savedmodel"))
        served = loaded.serve(
            tf.constant([raw[i][0] for i in ids]), tf.constant([raw[i][1] for i in ids])
        )
        spans = [a.decode() for a in served["best_span"].numpy()]
        assert spans == [predictions[i] for i in ids]
        threshold = result["best"]["best_f1_thresh"]
        answers = [a.decode() for a in served["answer"].numpy()]
        odds = served["null_odds"].numpy()
        assert max_abs_diff(odds, [dev_odds[i] for i in ids]) < 1e-4
        assert answers == [
            s if o <= threshold else "" for s, o in zip(spans, odds, strict=True)
        ]


def test_chinese_wordpiece_task(tmp_path):
    from albert_keras.tokenizers import build_wordpiece_vocabulary

    vocab = build_wordpiece_vocabulary(
        [_task("zh_sentiment", "train.jsonl")],
        str(tmp_path / "vocab.txt"),
        vocab_size=3000,
        max_characters=2_000_000,
    )
    out = str(tmp_path / "zh")
    result = run_finetuning(
        task_from_name("classify", sequence_length=LENGTH),
        _task("zh_sentiment", "train.jsonl"),
        _task("zh_sentiment", "dev.jsonl"),
        output_dir=out,
        vocab=vocab,
        **FAST,
    )
    _check_run(result, out)
    assert result["vocab"] == vocab


def test_init_from_a_pretrained_model_and_the_cli(tmp_path, capsys):
    """`--init` a pretraining folder takes its pretrainer.keras's backbone
    and the vocabulary beside it."""
    import shutil

    from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    from albert_keras.sample_text import SPM_MODEL_PATH

    pretrained = tmp_path / "pretrain"
    pretrained.mkdir()
    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    pretrainer = AlbertPretrainer(AlbertBackbone(config))
    pretrainer.save(str(pretrained / "pretrainer.keras"))
    shutil.copy(SPM_MODEL_PATH, pretrained / "vocab.model")
    word_embeddings = pretrainer.backbone.embeddings.word_embeddings.numpy()
    out = tmp_path / "cli"
    code = main(
        [
            "finetune",
            "--task",
            "classify",
            "--train",
            _task("rt_sentiment", "train.jsonl"),
            "--dev",
            _task("rt_sentiment", "dev.jsonl"),
            "--init",
            str(pretrained),  # the folder of `albert-keras pretrain`
            "--output-dir",
            str(out),
            "--epochs",
            "1",
            "--max-train-examples",
            "32",
            "--max-dev-examples",
            "32",
            "--max-seq-length",
            "32",
            "--learning-rate",
            "0",
            "--optimizer",
            "adamw_official",
            "--group-by-length",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    with open(out / "run_settings.json") as f:
        assert json.load(f)["group_by_length"] is True
    assert "Best dev epoch 1" in printed and "Baseline majority_class" in printed
    # Output that is not a terminal gets plain lines, not Keras' redrawn bar.
    assert "epoch 1/1 done in" in printed and "val_accuracy" in printed
    assert "\b" not in printed and "\x1b" not in printed
    with open(out / "metrics.json") as f:
        assert json.load(f)["vocab"].endswith("vocab.model")
    # Learning rate 0: the fine-tuned backbone is the pretrained one.
    model = keras.saving.load_model(str(out / "best.keras"))
    np.testing.assert_array_equal(
        model.backbone.embeddings.word_embeddings.numpy(), word_embeddings
    )
    assert type(model.optimizer).__name__ == "OfficialAdamW"
    # The exported SavedModel takes raw strings and gives the model's logits.
    import tensorflow as tf

    from albert_keras.models import with_tokenizer
    from albert_keras.tokenizers import AlbertTokenizer

    texts = ["A gorgeous, witty film.", "", "x" * 5000]
    loaded = tf.saved_model.load(str(out / "savedmodel"))
    served = loaded.serve(tf.constant(texts))
    expected = with_tokenizer(model, AlbertTokenizer(SPM_MODEL_PATH), 32)(texts)
    np.testing.assert_allclose(served["logits"], expected["logits"], atol=1e-6)
    # Clear errors for a wrong vocabulary and a too-long sequence.
    other = tmp_path / "other.keras"
    AlbertBackbone(AlbertConfig.from_preset("albert_tiny")).save(str(other))
    on_dev = ["finetune", "--task", "classify"]
    on_dev += ["--train", _task("rt_sentiment", "dev.jsonl")]
    on_dev += ["--dev", _task("rt_sentiment", "dev.jsonl")]
    assert (
        main(
            [
                *on_dev,
                "--init",
                str(other),
                "--vocab",
                SPM_MODEL_PATH,
                "--output-dir",
                str(tmp_path / "refused"),
            ]
        )
        == 2
    )
    assert "vocab_size=1000 but the vocabulary has 8000" in capsys.readouterr().err
    # Longer sequences than the model's 128 positions: its table is extended.
    longer = [
        *on_dev,
        "--init",
        str(pretrained / "pretrainer.keras"),
        "--max-seq-length",
        "160",
        "--max-train-examples",
        "8",
        "--max-dev-examples",
        "8",
        "--epochs",
        "1",
        "--no-export",
        "--no-jit",
        "--output-dir",
        str(tmp_path / "longer"),
    ]
    assert main(longer) == 0
    assert (
        "The model has 128 positions: sequence_length=160 extends its table"
        in capsys.readouterr().out
    )
    model = keras.saving.load_model(str(tmp_path / "longer" / "best.keras"))
    assert model.backbone.config.max_position_embeddings == 160
    # `albert-keras predict` on the run's folder, and its errors.
    predict = [
        "predict",
        "--model",
        str(out),
        "--input",
        _task("rt_sentiment", "dev.jsonl"),
    ]
    assert main([*predict, "--max-examples", "32"]) == 0
    printed = capsys.readouterr().out
    assert "32 predicted" in printed
    assert "ClassificationTask metrics: accuracy" in printed
    assert os.path.isfile(out / "predictions-dev.jsonl")
    with open(out / "predictions-dev.jsonl") as f:
        run_lines = [json.loads(line) for line in f]
    # A .keras without its run folder: the task comes from the model's class
    # (class i is label i), the same predictions.
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(out / "best.keras", lone / "model.keras")
    alone = [
        "predict",
        "--model",
        str(lone / "model.keras"),
        "--input",
        _task("rt_sentiment", "dev.jsonl"),
        "--vocab",
        SPM_MODEL_PATH,
        "--max-seq-length",
        "32",
        "--max-examples",
        "32",
    ]
    assert main(alone) == 0
    assert "32 predicted" in capsys.readouterr().out
    with open(lone / "predictions-dev.jsonl") as f:
        lone_lines = [json.loads(line) for line in f]
    assert [p["label"] for p in lone_lines] == [p["label"] for p in run_lines]
    assert [p["line"] for p in lone_lines] == [p["line"] for p in run_lines]
    with open(out / "predictions-dev.metrics.json") as f:
        run_metrics = json.load(f)["metrics"]
    with open(lone / "predictions-dev.metrics.json") as f:
        assert json.load(f)["metrics"] == pytest.approx(run_metrics, abs=1e-6)
    # A CSV whose columns are named otherwise: the field flags map them, and
    # the predictions and scores are the run's.
    import csv

    with open(_task("rt_sentiment", "dev.jsonl")) as f:
        records = [json.loads(line) for line in f]
    renamed = tmp_path / "renamed.csv"
    with open(renamed, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["review", "stars"])
        writer.writerows([r["text"], r["label"]] for r in records)
    mapped = ["predict", "--model", str(out), "--input", str(renamed)]
    mapped += ["--text-field", "review", "--label-field", "stars"]
    assert main([*mapped, "--max-examples", "32"]) == 0
    with open(out / "predictions-renamed.jsonl") as f:
        csv_lines = [json.loads(line) for line in f]
    assert [p["label"] for p in csv_lines] == [p["label"] for p in run_lines]
    with open(out / "predictions-renamed.metrics.json") as f:
        assert json.load(f)["metrics"] == pytest.approx(run_metrics, abs=1e-6)
    # The same for a .keras without its run folder (the task from its class).
    lone_csv = ["predict", "--model", str(lone / "model.keras")]
    lone_csv += ["--input", str(renamed), "--vocab", SPM_MODEL_PATH]
    lone_csv += ["--text-field", "review", "--label-field", "stars"]
    assert main([*lone_csv, "--max-seq-length", "32", "--max-examples", "32"]) == 0
    with open(lone / "predictions-renamed.jsonl") as f:
        assert [json.loads(line)["label"] for line in f] == [
            p["label"] for p in run_lines
        ]
    capsys.readouterr()
    assert main([*mapped, "--context-field", "review"]) == 2
    assert "--context-field does not apply to a ClassificationTask model; it " in (
        capsys.readouterr().err
    )
    assert main([*mapped, "--text-pair-field", "stars"]) == 2
    assert "trained on 1 text(s) per example" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):  # the run says the task
        main([*predict, "--task", "squad"])
    assert "unrecognized arguments: --task" in capsys.readouterr().err
    assert main([*predict, "--max-seq-length", "512"]) == 2
    assert "exceeds the model's max_position_embeddings=128" in capsys.readouterr().err
    assert main(["predict", "--model", str(tmp_path), "--input", "x.jsonl"]) == 2
    assert "has no best.keras" in capsys.readouterr().err


def test_squad_answers_the_questions_it_was_fitted_on(tmp_path):
    """Windows, start/end labels, the answer class and the n-best decoding agree.

    A tiny model fitted on 16 real questions (4 unanswerable) and scored on the
    same questions must answer them: if labels pointed at the wrong tokens, or
    decoding mapped tokens back to the wrong words, F1 would stay near the
    always-no-answer baseline (25) however low the loss went.
    """
    with open(_task("disfl_qa", "train.json")) as f:
        data = json.load(f)
    paragraphs = data["data"][0]["paragraphs"][:3]
    questions = [q for p in paragraphs for q in p["qas"]]
    assert (len(questions), sum(q["is_impossible"] for q in questions)) == (16, 4)
    dev = str(tmp_path / "dev.json")
    with open(dev, "w") as f:
        json.dump({"version": "v2.0", "data": [{"paragraphs": paragraphs}]}, f)
    # Training sees each question 8 times an epoch (ids made unique), so that
    # a few epochs are enough steps and the dev scoring runs only a few times.
    # (16 copies at 5e-3 cost 1.5x the CPU for the same fit.)
    copies = [
        dict(p, qas=[dict(q, id=f"{q['id']}-{k}") for q in p["qas"]])
        for k in range(8)
        for p in paragraphs
    ]
    train = str(tmp_path / "train.json")
    with open(train, "w") as f:
        json.dump({"version": "v2.0", "data": [{"paragraphs": copies}]}, f)
    out = str(tmp_path / "squad")
    result = run_finetuning(
        # The v2 head (the official one); the simple head's decoding is
        # checked against the evaluation's in test_span_text_model.py.
        task_from_name("squad", head="v2", sequence_length=256),
        train,
        dev,
        output_dir=out,
        **dict(
            FAST,
            batch_size=8,
            # 8 epochs of 8 copies at 8e-3 fit these questions: best_f1 and
            # HasAns_f1 100 from epoch 7 (at 3e-3 the simple head was still
            # halfway: best_f1 75-81, HasAns_f1 50-58).
            learning_rate=8e-3,
            epochs=8,
            patience=8,
            max_train_examples=None,
        ),
    )
    assert result["baselines"]["always_no_answer"]["f1"] == 25.0
    assert result["best"]["best_f1"] > 75.0, result["best"]
    assert result["best"]["HasAns_f1"] > 60.0, result["best"]


def test_init_from_a_transformers_folder(tmp_path):
    from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    from albert_keras.sample_text import SPM_MODEL_PATH
    from checkpoints_convert import save_hf_checkpoint
    from checkpoints_convert.backbone_loader import find_vocabulary, load_backbone

    config = AlbertConfig.from_preset("albert_tiny", vocab_size=8000)
    source = AlbertPretrainer(AlbertBackbone(config))
    folder = save_hf_checkpoint(source, tmp_path / "hf", vocab=SPM_MODEL_PATH)
    assert find_vocabulary(str(folder), None).endswith("spiece.model")
    backbone = load_backbone(str(folder), 8000)
    for ours, theirs in zip(backbone.weights, source.backbone.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
