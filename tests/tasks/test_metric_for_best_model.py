"""`--metric-for-best-model` / `task.fit(metric_for_best_model=...)`.

On imbalanced labels accuracy rewards the majority class: a user keeps the
model of the best dev F1 or MCC instead (transformers' option of the same
name). The best model, the early stop, the curve and the result follow the
chosen score; it is recorded only when given (older runs resume); a name
the task does not score is refused with the names it does, before a model
is built.
"""

import json

import pytest
from albert_test_case import tiny_finetune

from albert_keras.tasks import (
    ClassificationTask,
    MultiLabelClassificationTask,
    MultipleChoiceTask,
    SquadTask,
    TokenClassificationTask,
)

# 3 rows in 4 of class 0: the majority class has accuracy 0.75, MCC 0.
ROWS = [
    {"text": f"word {i} " * (1 + i % 5), "label": int(i % 4 == 3)} for i in range(24)
]


def _cli(tmp_path, *flags, task="classify"):
    return tiny_finetune(tmp_path, ROWS, "--batch-size", "8", *flags, task=task)


def _outputs(tmp_path):
    run = tmp_path / "run"
    with open(run / "run_settings.json") as f:
        settings = json.load(f)
    with open(run / "metrics.json") as f:
        return settings, json.load(f)


def test_the_best_model_is_the_best_mcc(tmp_path, capsys):
    flags = ["--epochs", "3", "--patience", "3", "--learning-rate", "1e-3"]
    assert _cli(tmp_path, *flags, "--metric-for-best-model", "mcc") == 0
    out = capsys.readouterr().out
    assert "best dev mcc (--metric-for-best-model; the task's own: accuracy)" in out
    settings, result = _outputs(tmp_path)
    assert settings["metric_for_best_model"] == "mcc"
    assert result["monitor"] == "mcc"
    scores = result["epochs"]["val_mcc"]
    best = max(range(len(scores)), key=scores.__getitem__)  # the first best
    assert result["best_epoch"] == best + 1
    assert result["best"]["mcc"] == scores[best]


def test_left_out_the_task_picks_and_nothing_is_recorded(tmp_path):
    assert _cli(tmp_path, "--epochs", "1") == 0
    settings, result = _outputs(tmp_path)
    assert "metric_for_best_model" not in settings
    assert result["monitor"] == "accuracy"


@pytest.mark.parametrize(
    "task, name, offered",
    [
        ("classify", "loss", "accuracy, f1, mcc"),
        ("regress", "f1", "pearson, spearman"),
    ],
)
def test_a_score_the_task_lacks_is_refused(tmp_path, capsys, task, name, offered):
    assert _cli(tmp_path, "--metric-for-best-model", name, task=task) == 2
    err = capsys.readouterr().err
    assert f"--metric-for-best-model {name}:" in err and offered in err
    assert "Traceback" not in err
    assert not (tmp_path / "run" / "best.keras").exists()
    assert not (tmp_path / "run" / "run_settings.json").exists()


def test_each_task_offers_the_scores_it_computes():
    assert ClassificationTask(num_classes=1).metric_names == ("pearson", "spearman")
    assert ClassificationTask(num_classes=3).metric_names == ("accuracy", "f1", "mcc")
    assert MultipleChoiceTask().metric_names[0] == "accuracy"
    assert MultiLabelClassificationTask().metric_names[0] == "micro_f1"
    assert SquadTask().metric_names[0] == "best_f1"
    chunks = TokenClassificationTask(labels=["O", "B-X", "I-X"])
    assert chunks.metric_names[0] == "entity_f1" == chunks.monitor
    assert TokenClassificationTask(labels=["N", "V"]).metric_names == ("accuracy",)
