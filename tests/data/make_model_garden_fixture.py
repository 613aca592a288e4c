"""Write tests/data/model_garden/albert_tiny_tf2.tar.gz by Model Garden (not in tests).

    pip install --target MG --no-deps tf-models-official==2.20.0 gin-config
    PYTHONPATH=MG python tests/data/make_model_garden_fixture.py

A tiny ALBERT (every weight random, LayerNorms and biases too) written three
ways, each by the code that writes the real files:
- `tf1/`: the google-research TF1 layout (`model.ckpt-best`, `albert_config.json`,
  `30k-clean.model`), written by `save_official_checkpoint`;
- `tf2_checkpoint/`: Model Garden's `tf2_albert_encoder_checkpoint_converter`
  of `tf1/` (`converted_model="pretrainer"`: the AlbertEncoder and its masked-LM
  head in an object-based `tf.train.Checkpoint`), how Model Garden users get
  TF2 ALBERT checkpoints;
- `hub/`: Model Garden's `export_tfhub_lib.export_model` of that checkpoint
  (`with_mlm=True`, the SentencePiece model as its asset), how the TF2 Hub
  `tensorflow/albert_en_*` SavedModels were made.

The tests load `tf2_checkpoint/` and `hub/` and compare with `tf1/` (weights)
and with the SavedModel's own signatures (outputs), so Model Garden is the
reference without being installed.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "model_garden", "albert_tiny_tf2.tar.gz")
CONFIG = {
    "vocab_size": 100,
    "embedding_size": 8,
    "hidden_size": 16,
    "num_hidden_layers": 3,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "max_position_embeddings": 32,
    "type_vocab_size": 2,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
}


def write_tf1(folder):
    """The TF1 release layout of a random tiny pretrainer."""
    from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer
    from albert_keras.tokenizers.vocabulary import train_sentencepiece
    from checkpoints_convert import save_official_checkpoint

    config = AlbertConfig.from_dict(CONFIG)
    model = AlbertPretrainer(AlbertBackbone(config))
    rng = np.random.default_rng(0)
    for weight in model.weights:
        value = rng.normal(0.0, 0.3, weight.shape)
        if weight.path.endswith("gamma"):
            value += 1.0
        weight.assign(value.astype("float32"))
    save_official_checkpoint(model, os.path.join(folder, "model.ckpt-best"))
    corpus = os.path.join(HERE, "pretrain", "en_brown.txt")
    # No NFKC table in the model (the release's has one): 240 KB smaller.
    train_sentencepiece(
        corpus,
        os.path.join(folder, "30k-clean"),
        CONFIG["vocab_size"],
        normalization_rule_name="identity",
    )


def write_tf2(tf1, tf2, hub):
    """Model Garden's converter of `tf1`, then its TF Hub export."""
    from official.legacy.albert import configs
    from official.nlp.configs import encoders
    from official.nlp.tools import export_tfhub_lib
    from official.nlp.tools import tf2_albert_encoder_checkpoint_converter as convert

    config = configs.AlbertConfig.from_json_file(
        os.path.join(tf1, "albert_config.json")
    )
    os.makedirs(os.path.join(tf2, "temp_v1"))  # the converter's scratch folder
    convert.convert_checkpoint(
        config,
        os.path.join(tf2, "ckpt"),
        os.path.join(tf1, "model.ckpt-best"),
        "model",  # as TF-NLP's pretrainers: model=, encoder=, masked_lm=
        converted_model="pretrainer",
    )
    encoder_config = encoders.EncoderConfig(
        type="albert",
        albert=encoders.AlbertEncoderConfig(
            vocab_size=config.vocab_size,
            embedding_width=config.embedding_size,
            hidden_size=config.hidden_size,
            num_layers=config.num_hidden_layers,
            num_attention_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            hidden_activation=config.hidden_act,
            dropout_rate=0.0,
            attention_dropout_rate=0.0,
        ),
    )
    export_tfhub_lib.export_model(
        hub,
        encoder_config=encoder_config,
        model_checkpoint_path=_latest(tf2),
        with_mlm=True,
        sp_model_file=os.path.join(tf1, "30k-clean.model"),
        do_lower_case=True,
    )


def _latest(folder):
    import tensorflow as tf

    return tf.train.latest_checkpoint(folder)


def main():
    work = tempfile.mkdtemp()
    try:
        parts = {
            name: os.path.join(work, name) for name in ("tf1", "tf2_checkpoint", "hub")
        }
        write_tf1(parts["tf1"])
        write_tf2(parts["tf1"], parts["tf2_checkpoint"], parts["hub"])
        with open(os.path.join(work, "CONFIG.json"), "w") as f:
            json.dump(CONFIG, f, indent=2)
        os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
        partial = OUTPUT + ".partial"
        with tarfile.open(partial, "w:gz") as tar:
            for name in sorted(parts):
                tar.add(parts[name], arcname=name)
        os.replace(partial, OUTPUT)
        print(f"wrote {OUTPUT} ({os.path.getsize(OUTPUT)} bytes)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
