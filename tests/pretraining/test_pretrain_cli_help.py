"""`albert-keras pretrain` explains itself: each flag's help and default, and
warnings where its figures would mislead (repeated instances, small held-out
sets)."""

import argparse
import json
import os
from types import SimpleNamespace

import pytest

from albert_keras.cli import build_parser, main
from albert_keras.pretraining.pretrain_inputs import (
    MAX_MARGIN,
    MAX_REPEATS,
    MIN_SAMPLE,
    held_out_report,
    margin,
    repeat_report,
)
from albert_keras.training.loss_curve_plot import read_curve_points


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of `albert-keras <name>`."""
    parser = build_parser()
    (commands,) = [
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ]
    return commands.choices[name]


def assert_every_flag_explained(parser: argparse.ArgumentParser) -> None:
    """Every flag of `parser` has a help text, and the help of every flag with
    a default (other than None or off) shows it, as "default: <value>" in
    the rendered `--help` (a switch that is on by default: "default: on")."""
    formatter = parser._get_formatter()
    rendered = " ".join(parser.format_help().split())
    unexplained, hidden = [], []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        name = "/".join(action.option_strings) or action.dest
        if not (action.help or "").strip():
            unexplained.append(name)
            continue
        default = action.default
        if default is None or default is False or default == argparse.SUPPRESS:
            continue
        text = " ".join(formatter._expand_help(action).split())
        shown = "default: on" if default is True else f"default: {default}"
        if shown not in text or shown not in rendered:
            hidden.append(f"{name} (default {default!r}): {text!r}")
    assert not unexplained, f"flags without a help text: {unexplained}"
    assert not hidden, "defaults the help does not show:\n" + "\n".join(hidden)


@pytest.mark.parametrize(
    "command",
    ["pretrain", "create-data", "info", "vocab", "finetune", "predict", "export"],
)
def test_every_flag_is_explained_with_its_default(command):
    assert_every_flag_explained(subcommand_parser(command))


def test_the_check_names_a_flag_without_help_or_default():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100, help="training steps")
    parser.add_argument("--quiet", action="store_true")
    with pytest.raises(AssertionError, match=r"without a help text: \['--quiet'\]"):
        assert_every_flag_explained(parser)
    parser._actions[-1].help = "no progress line"
    with pytest.raises(AssertionError, match="--steps \\(default 100\\)"):
        assert_every_flag_explained(parser)


def _args(steps, batch_size=32, dupe_factor=2):
    return SimpleNamespace(
        steps=steps, batch_size=batch_size, dupe_factor=dupe_factor, records=None
    )


def test_repeats_are_counted_and_warned_of_past_the_threshold(tmp_path):
    data_dir = str(tmp_path)
    stats = {"instances": 1000, "documents": 12, "bytes": 250_000}
    with open(os.path.join(data_dir, "stats.json"), "w") as f:
        json.dump(stats, f)
    line, warning = repeat_report(_args(MAX_REPEATS * 1000 // 32), data_dir)
    assert "passes over 1,000 training instances" in line and warning is None
    line, warning = repeat_report(_args(1000), data_dir)  # 32,000 sequences
    assert "each training instance is seen 32 times" in warning
    assert "1,000 instances: 12 documents, 0.25 MB" in warning
    assert "the text itself 64 times" in warning
    for fix in ("more text", "fewer --steps (31 steps", "--dupe-factor"):
        assert fix in warning
    # --records: the count is unknown (counting would read them all).
    records = SimpleNamespace(**{**vars(_args(1000)), "records": "r/*.tfrecord"})
    assert repeat_report(records, data_dir) == ("", None)


def test_held_out_accuracies_name_their_sample_and_its_margin():
    assert margin(0.5, 400) == pytest.approx(1.96 * 0.025)
    assert margin(0.5, MIN_SAMPLE) <= MAX_MARGIN < margin(0.5, MIN_SAMPLE - 1)
    sizes = {"sop_pairs": 30, "mlm_predictions": 2000, "mlm_unigram_baseline": 0.07}
    assert held_out_report({**sizes, "sop_pairs": MIN_SAMPLE})[1] == []
    line, warnings = held_out_report(sizes)
    assert line.startswith("30 SOP pairs and 2,000 masked predictions")
    assert len(warnings) == 1 and "SOP accuracy on 30 pairs" in warnings[0]
    metrics = {"eval_mlm_accuracy": 0.11, "eval_sop_accuracy": 0.633}
    line, warnings = held_out_report(sizes, metrics)
    assert "MLM accuracy 0.110 on 2,000 masked predictions (±0.014 at 95%" in line
    assert "SOP accuracy 0.633 on 30 pairs (±0.172" in line
    (warning,) = warnings
    assert "too few to compare runs (±0.172 at 95%, wider than ±0.05)" in warning
    assert "--held-out-every" in warning
    # The margin decides, not the count: 280 predictions at accuracy 0.1 give
    # ±0.035, close enough (they were warned of as under 385).
    few = {**sizes, "mlm_predictions": 280, "sop_pairs": MIN_SAMPLE}
    assert held_out_report(few, {**metrics, "eval_mlm_accuracy": 0.1})[1] == []
    (warning,) = held_out_report(few, {**metrics, "eval_mlm_accuracy": 0.5})[1]
    assert "MLM accuracy on 280 masked predictions: too few" in warning


def test_a_small_corpus_run_warns_of_both(tmp_path, capsys, monkeypatch):
    """A few paragraphs trained on for many steps, two documents held out:
    both warnings, the sample sizes in the report and metrics.json, and a
    point per step (not per epoch) in curves.png."""
    from albert_test_case import corpus_path

    from albert_keras.models.albert_text_model import AlbertTextModel
    from albert_keras.pretraining.text_documents import read_documents

    # The text-in SavedModel (half of this run's time) is test_pretrain_cli's.
    monkeypatch.setattr(
        AlbertTextModel, "export", lambda self, path, **kw: os.makedirs(path)
    )

    documents = [doc[:4] for doc in read_documents(corpus_path("en_brown.txt"))[:8]]
    corpus = tmp_path / "small.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
    out = str(tmp_path / "run")
    args = ["pretrain", "--input", str(corpus), "--output-dir", out]
    args += ["--preset", "albert_tiny", "--held-out-every", "4", "--dupe-factor", "1"]
    args += ["--max-seq-length", "32", "--max-predictions-per-seq", "4"]
    args += ["--batch-size", "16", "--steps", "20", "--steps-per-epoch", "10"]
    args += ["--save-every", "20", "--warmup-steps", "4", "--no-jit"]
    assert main(args) == 0
    captured = capsys.readouterr()
    metrics = json.load(open(os.path.join(out, "metrics.json")))
    pairs = metrics["eval_sop_pairs"]
    assert 0 < pairs < 100 and metrics["eval_mlm_predictions"] > pairs
    assert "passes over" in captured.out
    assert f"SOP accuracy {metrics['eval_sop_accuracy']:.3f} on {pairs} pairs (±" in (
        captured.out
    )
    assert "warning: each training instance is seen" in captured.err
    assert f"warning: held-out SOP accuracy on {pairs} pairs: too few" in captured.err
    points = read_curve_points(os.path.join(out, "curves.png"))
    assert len(points["steps"]["mlm_loss"]) == 20 > len(points["epochs"]) == 2
    assert points["baselines"] == {
        "sop_accuracy": ["chance", 0.5],
        "mlm_accuracy": ["unigram baseline", metrics["eval_mlm_unigram_baseline"]],
    }


@pytest.mark.parametrize("value", ["fast", "-0.001", "nan", "inf"])
def test_a_bad_learning_rate_is_named_with_the_fix(value, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["finetune", "--learning-rate", value])
    err = capsys.readouterr().err
    assert f"argument --learning-rate: {value!r} is not a rate" in err
    assert "give a number >= 0 (such as 2e-4) or auto" in err


def test_a_good_learning_rate_parses():
    parser = subcommand_parser("finetune")
    files = ["--task", "classify", "--train", "t.csv", "--dev", "d.csv"]
    assert parser.parse_args([*files, "--learning-rate", "2e-4"]).learning_rate == 2e-4
    assert parser.parse_args(files).learning_rate is None  # auto
