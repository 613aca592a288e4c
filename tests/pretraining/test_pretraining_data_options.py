"""PretrainingDataOptions: one definition of create_pretraining_data's settings."""

import argparse
import dataclasses
import pickle

import pytest

from albert_keras.pretraining.create_data_cli import add_data_arguments, data_options
from albert_keras.pretraining.pretraining_data import (
    create_pretraining_arrays,
    create_pretraining_data,
)
from albert_keras.pretraining.pretraining_data_options import PretrainingDataOptions
from albert_keras.sample_text import CORPUS_PATH


def test_defaults_are_the_official_scripts():
    assert dataclasses.asdict(PretrainingDataOptions()) == {
        "tokenizer": None,
        "lowercase": True,
        "max_seq_length": 512,
        "max_predictions_per_seq": 20,
        "masked_lm_prob": 0.15,
        "short_seq_prob": 0.1,
        "dupe_factor": 1,
        "ngram": 3,
        "do_whole_word_mask": True,
        "random_next_sentence": False,
        "split_sentences": False,
        "seed": 12345,
        "num_shards": None,
        "num_workers": 1,
        "verbose": True,
    }


def test_checked_when_made():
    with pytest.raises(ValueError, match="dupe_factor=0"):
        PretrainingDataOptions(dupe_factor=0)
    with pytest.raises(ValueError, match="num_shards=0"):
        PretrainingDataOptions(num_shards=0)
    with pytest.raises(ValueError, match="max_seq_length=4"):
        PretrainingDataOptions(max_seq_length=4)
    with pytest.raises(ValueError, match="masked_lm_prob"):
        PretrainingDataOptions(masked_lm_prob=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        PretrainingDataOptions().seed = 1
    # Jobs sent to worker processes carry the options.
    options = PretrainingDataOptions(seed=3, max_seq_length=64)
    assert pickle.loads(pickle.dumps(options)) == options


def test_keywords_and_options_are_the_same_settings(tmp_path):
    settings = dict(max_seq_length=64, max_predictions_per_seq=10, seed=7)
    settings.update(split_sentences=True, verbose=False)
    by_keywords = create_pretraining_data(
        [CORPUS_PATH], str(tmp_path / "a.tfrecord"), **settings
    )
    options = PretrainingDataOptions(**settings)
    by_options = create_pretraining_data(
        [CORPUS_PATH], str(tmp_path / "b.tfrecord"), options=options
    )
    assert by_keywords["instances"] == by_options["instances"] > 100
    assert (tmp_path / "a.tfrecord").read_bytes() == (
        tmp_path / "b.tfrecord"
    ).read_bytes()
    # Keywords change fields of the options given.
    create_pretraining_data(
        [CORPUS_PATH],
        str(tmp_path / "c.tfrecord"),
        options=dataclasses.replace(options, seed=8),
        seed=7,
    )
    assert (tmp_path / "c.tfrecord").read_bytes() == (
        tmp_path / "a.tfrecord"
    ).read_bytes()


def test_unknown_keyword_is_a_type_error(tmp_path):
    with pytest.raises(
        TypeError,
        match=r"create_pretraining_data\(\) got unknown keyword argument\(s\): "
        r"max_seq_len\. Allowed: tokenizer, lowercase, max_seq_length, ",
    ):
        create_pretraining_data([CORPUS_PATH], str(tmp_path), max_seq_len=64)
    with pytest.raises(TypeError, match=r"create_pretraining_arrays\(\) got unknown"):
        create_pretraining_arrays([CORPUS_PATH], dupefactor=2)
    with pytest.raises(TypeError, match="writes no files"):
        create_pretraining_arrays([CORPUS_PATH], num_shards=2)


def test_flags_are_the_options():
    parser = argparse.ArgumentParser()
    add_data_arguments(parser)
    keywords = data_options(parser.parse_args(["--seed", "4", "--no-lowercase"]))
    assert keywords.pop("vocab") is None
    options = PretrainingDataOptions.from_keywords(keywords)
    assert (options.seed, options.lowercase) == (4, False)
    defaults = dataclasses.asdict(PretrainingDataOptions())
    for name, value in keywords.items():
        if name not in ("seed", "lowercase"):
            assert value == defaults[name], name
    assert set(defaults) - set(keywords) == {"tokenizer", "split_sentences", "verbose"}
