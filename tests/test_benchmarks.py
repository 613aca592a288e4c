"""benchmarks/ as a user runs them: bad input refused up front, files written whole.

The scripts' own measurements are not run here (see the smoke tests of
bench_accelerator, bench_int8_litert and bench_pretraining_quality).
"""

import ast
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
SCRIPTS = sorted(n for n in os.listdir(BENCHMARKS) if n.endswith(".py"))


def load(name):
    if BENCHMARKS not in sys.path:  # the scripts import each other
        sys.path.insert(0, BENCHMARKS)
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(BENCHMARKS, f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _writes(tree):
    """Lines of `open(..., "w"/"a"/"x")` calls and `json.dump` to a file."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        modes = node.args[1:2] + [k.value for k in node.keywords if k.arg == "mode"]
        mode = modes[0].value if modes and isinstance(modes[0], ast.Constant) else ""
        writing = isinstance(mode, str) and set(mode) & set("wax")
        if (name == "open" and writing) or name == "json.dump":
            yield node.lineno


@pytest.mark.parametrize("script", SCRIPTS)
def test_output_files_go_through_temporary_then_rename(script):
    """A killed run never leaves half a results file (albert_keras.atomic_files)."""
    with open(os.path.join(BENCHMARKS, script), encoding="utf-8") as f:
        lines = list(_writes(ast.parse(f.read())))
    assert not lines, f"{script}: writes a file directly at lines {lines}"


def test_backbone_inference_names_the_known_configs(capsys):
    with pytest.raises(SystemExit):
        load("bench_backbone_inference").main(["--configs", "base,large"])
    assert "unknown --configs large; known: base, small" in capsys.readouterr().err


def test_embed_finetune_refuses_a_batch_without_negatives(capsys):
    with pytest.raises(SystemExit) as stop:
        load("bench_embed_finetune").main(["--batch", "1"])
    assert "--batch must be 2 or more" in str(stop.value)


def test_serving_refuses_a_missing_data_file_before_any_export(tmp_path):
    with pytest.raises(SystemExit) as stop:
        load("bench_serving").main(["--data", str(tmp_path / "none.jsonl")])
    assert "none.jsonl: no such file" in str(stop.value)


def test_create_data_refuses_a_missing_official_script(tmp_path, capsys):
    text = tmp_path / "input.txt"
    text.write_text("A line.\n")
    bench = load("bench_create_data")
    with pytest.raises(SystemExit):
        bench.parse_args(["--input", str(text), "--official-script", "x/create.py"])
    assert "clone github.com/google-research/albert" in capsys.readouterr().err


def test_create_data_without_the_official_script_says_there_is_no_ratio(
    capsys, monkeypatch
):
    bench = load("bench_create_data")
    summary = dict(instances=8, mean_length=30.0, masked_share=0.1, label_1_share=0.5)
    monkeypatch.setattr(bench, "_summary", lambda *args: summary)
    args = bench.argparse.Namespace(max_seq_length=64, max_predictions_per_seq=5)
    timings = {"ours": [{"wall": 2.0, "core": 1.0, "tensorflow": False}]}
    bench._report(args, {"ours": "unused"}, timings, 1.0)
    out = capsys.readouterr().out
    assert "ours imported TensorFlow: no" in out
    assert "no ratio: pass --official-script" in out


def test_tokenizer_refuses_bad_flags(tmp_path, capsys):
    bench = load("bench_tokenizer")
    for argv, message in (
        (["--megabytes", "0"], "--megabytes must be above 0"),
        (["--model", str(tmp_path / "no.model")], "not found"),
        (["--data-dir", str(tmp_path)], "has no pretrain/en_news.txt"),
    ):
        with pytest.raises(SystemExit):
            bench.main(argv)
        assert message in capsys.readouterr().err, argv


def test_tokenizer_reads_the_corpora_of_data_dir(tmp_path):
    bench = load("bench_tokenizer")
    (tmp_path / "pretrain").mkdir()
    for name in bench.CORPORA:
        (tmp_path / "pretrain" / name).write_text(f"{name} one\n\n{name} two\n")
    lines, where = bench.english_lines(1.0, str(tmp_path))
    assert lines[:3] == [f"{name} one" for name in bench.CORPORA] and len(lines) == 6
    assert where.startswith(str(tmp_path))


def test_finetune_refuses_missing_files_before_any_training(tmp_path):
    bench = load("bench_finetune")
    argv = ["--data-dir", str(tmp_path), "--tasks", "rt_sentiment", "--random-only"]
    with pytest.raises(SystemExit, match="pass --data-dir"):
        bench.check_inputs(bench.parse_args(argv))
    with pytest.raises(SystemExit, match="--pretrained .* not found"):
        bench.check_inputs(bench.parse_args(["--pretrained", "runs/x/pt.keras"]))
    # --speed-only reads no data set.
    bench.check_inputs(bench.parse_args([*argv, "--speed-only"]))


def test_pretraining_step_refuses_an_unknown_dtype(capsys):
    with pytest.raises(SystemExit):
        load("bench_pretraining_step").main(["--dtype", "float33"])
    assert "--dtype 'float33' is not a Keras dtype policy" in capsys.readouterr().err


def test_create_data_removes_its_temporary_folder_when_a_run_fails(
    tmp_path, monkeypatch
):
    text = tmp_path / "input.txt"
    text.write_text("A line.\n")
    bench = load("bench_create_data")
    out = tmp_path / "temporary"
    out.mkdir()
    monkeypatch.setattr(bench.tempfile, "mkdtemp", lambda prefix: str(out))

    def failing(name, command, env):
        raise SystemExit(f"{name} data creation failed")

    monkeypatch.setattr(bench, "_timed", failing)
    with pytest.raises(SystemExit, match="our data creation failed"):
        bench.main(["--input", str(text)])
    assert not out.exists()


def test_finetune_learning_rate_defaults_to_the_commands_auto():
    # docs/fine-tuning.md: "Unless a row says otherwise: AdamW 2e-4" (auto
    # for the small config), as `albert-keras finetune`.
    bench = load("bench_finetune")
    assert bench.parse_args([]).learning_rate is None
    assert bench.parse_args(["--learning-rate", "5e-5"]).learning_rate == 5e-5


def test_model_build_refuses_an_unknown_config(capsys):
    with pytest.raises(SystemExit):
        load("bench_model_build").main(["--configs", "tiny,huge"])
    assert "unknown --configs huge; known: tiny, base" in capsys.readouterr().err


def test_model_build_compares_like_with_like():
    """Ours and keras-hub's backbone have the same weights (tiny config), and
    `--first-step` fits both heads one step."""
    bench = load("bench_model_build")
    ours = bench.build({"config": "tiny", "impl": "ours", "first_step": True})
    hub = bench.build({"config": "tiny", "impl": "keras_hub", "first_step": True})
    assert ours["parameters"] == hub["parameters"] > 0
    assert 0 < ours["cpu_seconds"] and 0 < hub["cpu_seconds"]
    assert 0 < ours["step_cpu_seconds"] and 0 < hub["step_cpu_seconds"]


def test_fill_mask_runs_both_and_they_agree(tmp_path, capsys):
    """The quick form of bench_fill_mask: ours and transformers' pipeline on
    the same weights give the same top-1 piece for every text."""
    pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    pytest.importorskip("transformers")
    out = tmp_path / "r.json"
    argv = ["--config", "tiny", "--texts", "6", "--words", "12", "--batch", "3"]
    assert (
        load("bench_fill_mask").main([*argv, "--repeats", "1", "--output", str(out)])
        == 0
    )
    import json

    result = json.loads(out.read_text())
    assert result["top1_agreement"] == 1.0, result
    assert "ratio ours / transformers" in capsys.readouterr().out


def test_embed_runs_both_and_they_agree(tmp_path, capsys):
    """The quick form of bench_embed: ours and transformers + mean pooling on
    the same weights give the same vectors."""
    pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    pytest.importorskip("transformers")
    out = tmp_path / "r.json"
    argv = ["--config", "tiny", "--texts", "6", "--words", "12", "--batch", "4"]
    assert (
        load("bench_embed").main([*argv, "--repeats", "1", "--output", str(out)]) == 0
    )
    import json

    result = json.loads(out.read_text())
    assert result["max_abs_diff"] < 1e-5, result
    assert "ratio ours / transformers" in capsys.readouterr().out


def test_finetune_padding_cuts_and_groups_the_work(tmp_path, capsys):
    """The quick form of bench_finetune_padding: cut batches compute fewer
    token columns than full-length ones, grouped fewer still, in ours and in
    transformers alike; both train every way."""
    pytest.importorskip("torch", reason="PyTorch is not a test dependency")
    pytest.importorskip("transformers")
    out = tmp_path / "r.json"
    data = os.path.join(ROOT, "tests", "data", "tasks", "rt_sentiment", "train.jsonl")
    argv = ["--config", "tiny", "--texts", "256", "--data", data, "--output", str(out)]
    assert load("bench_finetune_padding").main(argv) == 0
    import json

    result = json.loads(out.read_text())
    for side in ("ours", "transformers"):
        full, cut, grouped = (
            result[w][f"{side}_tokens"] for w in ("full", "cut", "grouped")
        )
        assert full == 256 * 128 and grouped < cut < full, result
    assert all(len(result[w]["ours_epochs_s"]) == 3 for w in ("full", "cut", "grouped"))
    assert "ratio ours / transformers" in capsys.readouterr().out
