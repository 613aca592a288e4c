"""benchmarks/bench_pretraining_quality.py: a driver over `albert-keras pretrain`.

Without training: the command line it builds is one `albert-keras pretrain`
accepts, and it reads the files a run writes.
"""

import importlib.util
import json
import os

import pytest

from albert_keras.cli import build_parser

PATH = os.path.join(
    os.path.dirname(__file__), "..", "..", "benchmarks", "bench_pretraining_quality.py"
)
spec = importlib.util.spec_from_file_location("bench_pretraining_quality", PATH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_command_line_is_albert_keras_pretrain(tmp_path):
    (tmp_path / "pretrain").mkdir()
    for name in bench.CORPORA:
        (tmp_path / "pretrain" / name).write_text("a line\n")
    args, extra = bench.parse_args(
        ["--data-dir", str(tmp_path), "--steps", "7", "--learning-rate", "3e-3"]
    )
    parsed = build_parser().parse_args(bench.pretrain_argv(args, extra))
    assert parsed.input == [str(tmp_path / "pretrain" / n) for n in bench.CORPORA]
    assert (parsed.steps, parsed.steps_per_epoch, parsed.learning_rate) == (7, 7, 3e-3)
    assert parsed.held_out_every == 10 and parsed.max_seq_length == 64

    args, extra = bench.parse_args(["--embedded", "--vocab-size", "500"])
    parsed = build_parser().parse_args(bench.pretrain_argv(args, extra))
    assert parsed.input is None and parsed.vocab_size == 500


def test_missing_corpus_says_where_to_point(tmp_path):
    args, extra = bench.parse_args(["--data-dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="--data-dir"):
        bench.pretrain_argv(args, extra)


def test_reads_the_run_files(tmp_path):
    metrics = {
        "global_step": 4,
        "train_seconds": 2.0,
        "eval_mlm_accuracy": 0.1,
        "eval_mlm_unigram_baseline": 0.05,
        "eval_sop_accuracy": 0.6,
    }
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    (tmp_path / "history.csv").write_text(
        "epoch,seq_per_sec,sop_accuracy\n0,10.0,0.5\n1,20.0,0.7\n"
    )
    result = bench.read_results(str(tmp_path))
    assert result["held_out_mlm_accuracy"] == 0.1
    assert result["unigram_baseline"] == 0.05
    assert (result["training_sop_accuracy"], result["seq_per_s"]) == (0.7, 20.0)


def test_a_folder_it_did_not_make_is_refused_not_deleted(tmp_path):
    run = tmp_path / "runs" / "pretrain"
    run.mkdir(parents=True)
    (run / "pretrainer.keras").write_text("a real run")
    with pytest.raises(SystemExit, match="did not write"):
        bench.main(["--embedded", "--output-dir", str(run)])
    assert (run / "pretrainer.keras").read_text() == "a real run"
    # Its own folder is emptied for the fresh run.
    own = tmp_path / "bench"
    bench.fresh_output_dir(str(own))
    (own / "metrics.json").write_text("{}")
    bench.fresh_output_dir(str(own))
    assert sorted(os.listdir(own)) == [bench.MARK]
