"""benchmarks/bench_int8_litert.py --smoke: every path measured, numbers sane."""

import importlib.util
import json
import os

import pytest

pytest.importorskip("ai_edge_litert.interpreter")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_int8_litert.py")


def test_smoke_run_measures_every_path(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_int8_litert", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = str(tmp_path / "result.json")
    dev = os.path.join(ROOT, "tests", "data", "tasks", "rt_sentiment", "dev.jsonl")
    bench.main(["--smoke", "--seconds", "0.2", "--dev", dev, "--out", out])
    with open(out) as f:
        result = json.load(f)
    paths = ["keras_fp32_xla", "keras_int8_xla", "keras_int8", "litert_fp32"]
    assert set(result["seq_per_s"]) == {*paths, "litert_int8"}
    assert all(rate > 0 for rate in result["seq_per_s"].values())
    diffs = result["max_abs_diff_vs_keras_fp32"]
    assert diffs["litert_fp32"] < 1e-4
    # int8 differs, but by less than the logits themselves.
    for name in ("keras_int8", "litert_int8"):
        assert 0 < diffs[name] < result["largest_fp32_logit"], name
    parameter_bytes = 4 * result["parameters"]
    # The tiny config's graph is a fifth of its weights; base: see the docs.
    assert result["file_bytes"]["litert_fp32"] < 1.4 * parameter_bytes
    assert result["file_bytes"]["litert_int8"] < 0.6 * parameter_bytes
    dev = result["dev"]
    assert dev["examples"] > 10
    assert dev["agreement_with_keras_fp32"]["keras_fp32"] == 1.0
    assert dev["agreement_with_keras_fp32"]["litert_fp32"] == 1.0
    assert all(0 <= accuracy <= 1 for accuracy in dev["accuracy"].values())


def test_missing_files_are_refused_before_any_model_is_built(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_int8_litert", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for flag in ("--dev", "--model"):
        with pytest.raises(SystemExit):
            bench.parse_args(["--smoke", flag, str(tmp_path / "missing")])
        assert f"{flag} '{tmp_path / 'missing'}' not found" in capsys.readouterr().err


def test_a_failed_run_leaves_no_temporary_folder(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_int8_litert", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(bench.tempfile, "tempdir", str(temporary))

    def export_fails(model, path, quantization=None):
        open(path, "wb").close()
        raise OSError("No space left on device (injected)")

    monkeypatch.setattr(bench, "export_litert", export_fails)
    with pytest.raises(OSError, match="injected"):
        bench.main(["--smoke", "--seconds", "0.2", "--out", str(tmp_path / "r.json")])
    assert os.listdir(temporary) == []
