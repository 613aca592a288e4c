"""`AlbertAttention`: multi-head self-attention with the residual and LayerNorm."""

import math

import keras
from keras import ops

from albert_keras.layers.accelerator import fused_attention_is_faster
from albert_keras.layers.albert_dropout import AlbertDropout
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.layers.position_gather import take_positions

# None: each call chooses its attention path (see `AlbertAttention`);
# "fused" or "explicit" forces one, for benchmarks and tests.
FORCE_ATTENTION_PATH = None
# None: Q, K and V in one concatenated product (see `_project`); "three":
# one product per projection, for benchmarks and tests.
FORCE_QKV_PROJECTION = None


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertAttention(keras.layers.Layer):
    """Self-attention sub-block of an ALBERT layer (`attention_1` + `LayerNorm`).

    Query, key, value and output projections are 2-D [H, H] kernels, the shapes
    of the official checkpoint. The output is
    `LayerNorm(dropout(attention_output) + inputs)` (post-LN); padded query
    positions are still computed.

    Two paths compute `softmax(QK^T / sqrt(d)) V`, chosen per call:
    - fused: `keras.ops.dot_product_attention` with a boolean key mask (cuDNN
      flash attention on JAX GPUs, SDPA on torch, XLA elsewhere). Taken on a
      GPU or TPU under JAX or torch, unless attention dropout is active in
      training: the fused kernels have no dropout, so the v1 configs
      (attention dropout 0.1) train on the explicit path and infer on the
      fused one. Keys of odd or unknown length take the explicit path too
      (cuDNN trains with a mask only at even lengths); an odd number of
      queries gets one padding row.
    - explicit: the official graph, scores in float32 with -10000 added at
      padded keys. Taken on the CPU, where XLA runs it faster, and on the
      TensorFlow backend (whose `dot_product_attention` is the same math).
    Both give the same numbers (within float rounding) for every row that has
    a real key, which every ALBERT row has: `[CLS]` is never padding. A row
    whose keys are all padding (a dummy sequence) attends uniformly on the
    fused path and by its raw scores on the explicit one.

    Quantized (`model.quantize("int8")`, Keras's int8 `Dense`: int8 kernels
    with one scale per column, each input row quantized on the fly): the Q,
    K, V projections stay fused. Their int8 kernels and scales are
    concatenated and the input is quantized once, for one int8 [H, 3H]
    product: the same numbers as three int8 `Dense` calls. Training calls
    (gradients), LoRA and the other modes (int4, float8) fall back to one
    call per projection.

    Args:
        hidden_size: int. Width H.
        num_heads: int. Number of heads; must divide H.
        dropout: float. Dropout on the output projection.
        attention_dropout: float. Dropout on the attention probabilities.
        initializer_range: float. Stddev of the truncated-normal initializer.

    Call arguments:
        inputs: float tensor [batch, length, H].
        padding_mask: tensor [batch, length], 1 for real tokens, 0 for padding.
        query_positions: optional int tensor [batch, P]: compute the output only
            at these positions (queries there, keys and values everywhere);
            the output is then [batch, P, H], equal to those rows of the full
            output. Pretraining uses it in the last block, whose other rows no
            head reads. For calls on tensors; a symbolic (functional) call
            with it still reports the full-length output shape.

    Example:
    >>> layer = AlbertAttention(64, 4)
    >>> x = keras.ops.ones((2, 8, 64))
    >>> tuple(layer(x, keras.ops.ones((2, 8), "int32")).shape)
    (2, 8, 64)
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        dropout=0.0,
        attention_dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (("hidden_size", hidden_size), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )
        if hidden_size % num_heads:
            raise ValueError(
                "`hidden_size` must be divisible by `num_heads`. "
                f"Received: hidden_size={hidden_size}, num_heads={num_heads}"
            )
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range

        def dense(name):
            return keras.layers.Dense(
                hidden_size,
                kernel_initializer=HostTruncatedNormal(stddev=initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output")
        self.attention_dropout_layer = AlbertDropout(
            attention_dropout, dtype=self.dtype_policy, name="attention_dropout"
        )
        self.output_dropout = AlbertDropout(
            dropout, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, input_shape):
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build(input_shape)
        self.layer_norm.build(input_shape)
        self.built = True

    def _project(self, x, layers, training=None):
        """`[layer(x) for layer in layers]`, as one matmul where possible.

        The kernels stay separate variables (the official checkpoint's
        layout); concatenating them for the call turns three [H, H] products
        into one [H, 3H] product, which runs faster on CPU. After
        `quantize("int8")` the int8 kernels and their scales are concatenated
        the same way (`_project_int8`).
        """
        modes = {layer.quantization_mode for layer in layers}
        if len(layers) == 1 or any(layer.lora_enabled for layer in layers):
            return [layer(x) for layer in layers]
        if FORCE_QKV_PROJECTION == "three":
            return [layer(x) for layer in layers]
        if modes == {"int8"} and not training and _same_input_quantizers(layers):
            return self._project_int8(x, layers)
        if modes != {None}:
            return [layer(x) for layer in layers]
        kernel = ops.concatenate([layer.kernel for layer in layers], axis=1)
        bias = ops.concatenate([layer.bias for layer in layers], axis=0)
        fused = ops.matmul(x, ops.cast(kernel, self.compute_dtype))
        fused = fused + ops.cast(bias, self.compute_dtype)
        return ops.split(fused, len(layers), axis=-1)

    def _project_int8(self, x, layers):
        """The int8 `Dense` call of Keras on concatenated kernels and scales.

        Each row of `x` is quantized once (abs-max), multiplied by the int8
        [H, 3H] kernel in int32 and scaled back per row and column: the same
        numbers as three int8 `Dense` calls, which would quantize `x` three
        times. Inference only (no custom gradient): training calls the
        layers one by one.
        """
        kernel = ops.concatenate([layer.kernel for layer in layers], axis=1)
        scale = ops.concatenate([layer.kernel_scale for layer in layers], axis=0)
        quantizer = layers[0].inputs_quantizer
        if quantizer is not None:
            x, inputs_scale = quantizer(x, axis=-1)
            scale = ops.multiply(scale, inputs_scale)
        fused = ops.divide(ops.cast(ops.matmul(x, kernel), self.compute_dtype), scale)
        bias = ops.concatenate([layer.bias for layer in layers], axis=0)
        fused = fused + ops.cast(bias, self.compute_dtype)
        return ops.split(fused, len(layers), axis=-1)

    def call(self, inputs, padding_mask=None, training=None, query_positions=None):
        shape = ops.shape(inputs)
        batch, length = shape[0], shape[1]
        # Projections, residual and LayerNorm run on [batch * length, H]
        # rows: the same numbers, but the gradients of the biases and the
        # LayerNorm then sum over one axis, which XLA's CPU backend does in a
        # vectorized kernel (over two axes it does not).
        rows = ops.reshape(inputs, (-1, self.hidden_size))
        if query_positions is None:
            queries = rows
            query_length = length
            q, k, v = self._project(rows, (self.query, self.key, self.value), training)
        else:
            picked = take_positions(inputs, query_positions)
            query_length = ops.shape(picked)[1]
            queries = ops.reshape(picked, (-1, self.hidden_size))
            (q,) = self._project(queries, (self.query,))
            k, v = self._project(rows, (self.key, self.value), training)
        heads = (self.num_heads, self.head_size)
        q = ops.reshape(q, (batch, query_length, *heads))
        k = ops.reshape(k, (batch, length, *heads))
        v = ops.reshape(v, (batch, length, *heads))
        if self._fused_path(training, k.shape[1]):
            context = self._fused_attention(q, k, v, padding_mask)
        else:
            context = self._explicit_attention(q, k, v, padding_mask, training)
        context = ops.reshape(context, (-1, self.hidden_size))
        output = self.output_dense(context)
        output = self.output_dropout(output, training=training)
        output = self.layer_norm(output + queries)
        return ops.reshape(output, (batch, query_length, self.hidden_size))

    def _fused_path(self, training, key_length):
        if training and self.attention_dropout > 0:
            return False  # the fused kernels have no attention dropout
        if key_length is None or key_length % 2:
            return False  # cuDNN trains with a mask only at even lengths
        if FORCE_ATTENTION_PATH is not None:
            return FORCE_ATTENTION_PATH == "fused"
        return fused_attention_is_faster()

    def _fused_attention(self, q, k, v, padding_mask):
        """`ops.dot_product_attention` on [batch, length, heads, size] inputs."""
        queries = q.shape[1]
        if queries is not None and queries % 2:
            # An odd query count ([CLS] and the masked positions): one more
            # query row, dropped after, since cuDNN trains with a mask only
            # at even lengths (and under remat its refusal comes too late
            # for Keras to fall back).
            q = ops.pad(q, ((0, 0), (0, 1), (0, 0), (0, 0)))
        mask = None
        if padding_mask is not None:
            shape = ops.shape(q)
            # [batch, 1, queries, keys]: cuDNN takes a mask only at full
            # length on both axes (a [batch, 1, 1, keys] one falls back).
            mask = ops.cast(padding_mask, "bool")[:, None, None, :]
            mask = ops.broadcast_to(mask, (shape[0], 1, shape[1], ops.shape(k)[1]))
        scale = 1.0 / math.sqrt(float(self.head_size))
        context = ops.dot_product_attention(q, k, v, mask=mask, scale=scale)
        return context if queries is None else context[:, :queries]

    def _explicit_attention(self, q, k, v, padding_mask, training):
        """The official graph; inputs and output [batch, length, heads, size]."""
        q = ops.transpose(q, (0, 2, 1, 3))
        k = ops.transpose(k, (0, 2, 1, 3))
        v = ops.transpose(v, (0, 2, 1, 3))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2)))
        scores = ops.multiply(scores, 1.0 / math.sqrt(float(self.head_size)))
        # Softmax in float32 even under mixed precision: -10000 and the
        # normalisation need the range.
        scores = ops.cast(scores, "float32")
        if padding_mask is not None:
            # [batch, 1, 1, keys] by reshape, not `[:, None, None, :]`: TFLite's
            # strided slice cannot add axes (a LiteRT export needs builtins).
            mask = ops.cast(padding_mask, "float32")
            mask = ops.reshape(mask, (ops.shape(mask)[0], 1, 1, -1))
            scores = scores + (1.0 - mask) * -10000.0
        probs = ops.softmax(scores, axis=-1)
        probs = ops.cast(probs, self.compute_dtype)
        probs = self.attention_dropout_layer(probs, training=training)
        context = ops.matmul(probs, v)
        return ops.transpose(context, (0, 2, 1, 3))

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "initializer_range": self.initializer_range,
        }


def _same_input_quantizers(layers):
    """Whether the int8 layers quantize their inputs alike (so, once for all)."""
    configs = [
        None if layer.inputs_quantizer is None else layer.inputs_quantizer.get_config()
        for layer in layers
    ]
    return all(config == configs[0] for config in configs)
