"""Lets the official google-research ALBERT TF1 code run under TensorFlow 2.x.

Import this module before any `albert.*` module, in a process of its own: it
turns on graph mode and puts a TF1-looking module in `sys.modules["tensorflow"]`
(`tf.compat.v1` plus the little of `tf.contrib` the official code touches), so
the official `import tensorflow as tf` / `from tensorflow.contrib import ...`
lines get TF1. `tensorflow.python.*` stays importable (lamb_optimizer uses it).

`contrib.layers.layer_norm` is re-implemented with the TF 1.15 semantics the
released checkpoints were written with: scope `LayerNorm` (made unique the TF1
way, so a second one in the same scope is `LayerNorm_1`), variables `beta` then
`gamma`, moments over the last axis, epsilon 1e-12.

Use `tf1_compat.tf1` (the real `tf.compat.v1`) in our own oracle code.
"""

import os
import sys
import types
import warnings

# tf.layers.dense, used by the official pooler and MLM head, exists only in
# tf-keras; Keras 3 has no TF1 layers. Must be set before TensorFlow loads.
os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

if "albert.modeling" in sys.modules:
    raise ImportError("import tf1_compat before any albert.* module")

import tensorflow as _tf2  # noqa: E402

tf1 = _tf2.compat.v1
# The official code is TF1 through and through; its deprecation notices are
# noise in a test log.
tf1.logging.set_verbosity(tf1.logging.ERROR)
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated")
# Graph mode, reference variables, TF1 shapes (`shape[-1].value`) and so on.
tf1.disable_v2_behavior()
# Load the lazily imported tf-keras TF1 layers while `tensorflow` is still the
# real package, so their own imports never see the shim below.
_ = tf1.layers.dense


def layer_norm(
    inputs,
    center=True,
    scale=True,
    activation_fn=None,
    reuse=None,
    variables_collections=None,
    outputs_collections=None,
    trainable=True,
    begin_norm_axis=1,
    begin_params_axis=-1,
    scope=None,
):
    """TF 1.15 `tf.contrib.layers.layer_norm`, for what the official code uses.

    The official code always passes begin_norm_axis=-1 and begin_params_axis=-1
    (normalize and scale over the last axis only); anything else is refused
    rather than silently computed differently.
    """
    del variables_collections, outputs_collections
    rank = inputs.shape.ndims
    if begin_norm_axis % rank != rank - 1 or begin_params_axis % rank != rank - 1:
        raise NotImplementedError("only last-axis layer_norm is re-implemented")
    if not (center and scale) or activation_fn is not None:
        raise NotImplementedError("only center=scale=True, no activation")
    with tf1.variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        params_shape = inputs.shape[-1:]
        # TF 1.15 creates beta before gamma; the order is kept so the
        # checkpoint's variable list matches the released ones.
        beta = tf1.get_variable(
            "beta",
            shape=params_shape,
            dtype=inputs.dtype.base_dtype,
            initializer=tf1.zeros_initializer(),
            trainable=trainable,
        )
        gamma = tf1.get_variable(
            "gamma",
            shape=params_shape,
            dtype=inputs.dtype.base_dtype,
            initializer=tf1.ones_initializer(),
            trainable=trainable,
        )
        mean, variance = tf1.nn.moments(inputs, [rank - 1], keep_dims=True)
        return tf1.nn.batch_normalization(
            inputs,
            mean,
            variance,
            offset=beta,
            scale=gamma,
            variance_epsilon=1e-12,
        )


def _register(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def _unavailable(module_name):
    """Module-level __getattr__ for contrib parts we do not provide."""

    def __getattr__(name):
        raise AttributeError(
            f"{module_name}.{name} is not provided by tests/oracle/tf1_compat.py "
            "(only the official model-building functions are supported)"
        )

    return __getattr__


# Only layer_norm is used by the functions the oracle calls; the other
# contrib modules are imported at the top of run_pretraining, classifier_utils
# and optimization but only used by their TPUEstimator / input pipelines.
contrib = _register("tensorflow.contrib")
for _part, _attributes in {
    "layers": {"layer_norm": layer_norm},
    "data": {},
    "metrics": {},
    "tpu": {},
    "cluster_resolver": {},
}.items():
    _full = f"tensorflow.contrib.{_part}"
    setattr(
        contrib,
        _part,
        _register(_full, __getattr__=_unavailable(_full), **_attributes),
    )

# The TF1-looking `tensorflow`: every attribute from tf.compat.v1, plus
# `contrib`. Its __path__ is the real package's, so importing a not yet loaded
# `tensorflow.python.*` submodule still finds it on disk.
shim = _register(
    "tensorflow",
    __getattr__=lambda name: getattr(tf1, name),
    __path__=list(_tf2.__path__),
    __file__=getattr(_tf2, "__file__", None),
    contrib=contrib,
)
