"""The README's five lines of Python fine-tuning, run exactly as shown there."""

import json
import os
import shutil

import numpy as np
from albert_test_case import max_abs_diff, task_file

# Byte-identical to the README's example: change both together.
README_LINES = """\
from albert_keras.tasks import ClassificationTask

task = ClassificationTask(num_classes=2, text_fields=("text",))
task.fit("albert_tiny", "train.jsonl", "dev.jsonl", epochs=1, max_train_examples=64)
task.export("savedmodel")
"""


def test_the_readme_shows_these_lines():
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        assert "```python\n" + README_LINES + "```" in f.read()


def test_readme_python_lines(tmp_path, monkeypatch):
    shutil.copy(task_file("rt_sentiment", "train.jsonl"), tmp_path / "train.jsonl")
    # A third of dev (every third line: both labels), less to score and serve.
    with open(task_file("rt_sentiment", "dev.jsonl")) as f:
        lines = f.readlines()[::3]
    with open(tmp_path / "dev.jsonl", "w") as f:
        f.writelines(lines)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(README_LINES, namespace)
    task = namespace["task"]

    # The run's report, where `fit` writes it by default.
    with open(tmp_path / "runs" / "finetune" / "metrics.json") as f:
        metrics = json.load(f)
    assert 0.0 <= metrics["best"]["accuracy"] <= 1.0
    assert metrics["task"] == json.loads(json.dumps(task.get_config()))

    # The SavedModel is the fitted model: on the dev texts it gives the logits
    # of `task.model` on the task's own packing of them.
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the tokenizer ops)

    data = task.read("dev.jsonl")
    dataset = task.dataset(data, task.tokenizer, batch_size=32)
    expected = task.model.predict(dataset, verbose=0)["logits"]
    loaded = tf.saved_model.load(str(tmp_path / "savedmodel"))
    served = loaded.serve(tf.constant([e["text_a"] for e in data.examples]))
    assert served["logits"].shape == expected.shape == (len(data.examples), 2)
    assert max_abs_diff(served["logits"], expected) < 1e-5
    # Not a constant: the texts get different scores.
    assert np.ptp(np.asarray(expected)[:, 1] - np.asarray(expected)[:, 0]) > 0
    assert os.path.isfile(tmp_path / "runs" / "finetune" / "best.keras")

    # Run again (a script started twice), the lines do nothing but load the
    # finished run, so the export is the same model.
    shutil.rmtree(tmp_path / "savedmodel")
    namespace = {}
    exec(README_LINES, namespace)
    again = namespace["task"]
    assert again.config == task.config and again.result["best"] == metrics["best"]
    loaded = tf.saved_model.load(str(tmp_path / "savedmodel"))  # kept alive
    served_again = loaded.serve(tf.constant([e["text_a"] for e in data.examples]))
    assert max_abs_diff(served_again["logits"], expected) < 1e-5
