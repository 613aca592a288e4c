"""Lets the official google-research ALBERT TF1 code run under TensorFlow 2.x.

Import this module before any `albert.*` module, in a process of its own: it
turns on graph mode and replaces `tensorflow` in `sys.modules` with
`tf.compat.v1` plus the little of `tf.contrib` the official code touches.
`contrib.layers.layer_norm` is re-implemented with the TF 1.15 semantics
(scope `LayerNorm`, variables `beta` then `gamma`, epsilon 1e-12).
"""

import os
import sys
import types

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.layers.dense needs tf-keras
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as _tf2  # noqa: E402

tf1 = _tf2.compat.v1
tf1.disable_v2_behavior()


def layer_norm(inputs, begin_norm_axis=-1, begin_params_axis=-1, scope=None, **unused):
    """TF 1.15 `contrib.layers.layer_norm` over the last axis."""
    del begin_norm_axis, begin_params_axis, unused
    with tf1.variable_scope(scope, default_name="LayerNorm"):
        shape = inputs.shape[-1:]
        beta = tf1.get_variable(
            "beta", shape=shape, initializer=tf1.zeros_initializer()
        )
        gamma = tf1.get_variable(
            "gamma", shape=shape, initializer=tf1.ones_initializer()
        )
        mean, variance = tf1.nn.moments(inputs, [-1], keep_dims=True)
        return tf1.nn.batch_normalization(
            inputs, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12
        )


def _module(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


contrib = _module(
    "tensorflow.contrib",
    layers=_module("tensorflow.contrib.layers", layer_norm=layer_norm),
    data=_module("tensorflow.contrib.data"),
    metrics=_module("tensorflow.contrib.metrics"),
    tpu=_module("tensorflow.contrib.tpu"),
    cluster_resolver=_module("tensorflow.contrib.cluster_resolver"),
)
tf1.contrib = contrib
# `import tensorflow as tf` in the official modules now gives TF1; the real
# package stays reachable for `tensorflow.python.*` imports.
tf1.__path__ = _tf2.__path__
sys.modules["tensorflow"] = tf1
