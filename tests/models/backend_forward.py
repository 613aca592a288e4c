"""Run in a subprocess with KERAS_BACKEND set: a forward pass from saved weights.

Usage: python backend_forward.py CONFIG_JSON WEIGHTS_NPZ INPUTS_NPZ OUT_NPZ
"""

import json
import sys

import keras
import numpy as np

from albert_keras import AlbertBackbone, AlbertConfig, AlbertPretrainer

config_path, weights_path, inputs_path, out_path = sys.argv[1:5]
config = AlbertConfig.from_dict(json.load(open(config_path)))
model = AlbertPretrainer(AlbertBackbone(config))
weights = np.load(weights_path)
model.set_weights([weights[f"w{i}"] for i in range(len(weights.files))])
x = dict(np.load(inputs_path))
out = model(x, training=False)
seq = model.backbone(x, training=False)
np.savez(
    out_path,
    backend=keras.backend.backend(),
    sequence_output=keras.ops.convert_to_numpy(seq["sequence_output"]),
    pooled_output=keras.ops.convert_to_numpy(seq["pooled_output"]),
    mlm_logits=keras.ops.convert_to_numpy(out["mlm_logits"]),
    sop_logits=keras.ops.convert_to_numpy(out["sop_logits"]),
)
