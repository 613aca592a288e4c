"""`AlbertBackbone`: embeddings, shared encoder and pooler, as a functional model."""

from __future__ import annotations

import math
import os

import keras
from keras import ops

from albert_keras.config import AlbertConfig
from albert_keras.layers.factorized_embedding import FactorizedEmbedding
from albert_keras.layers.host_truncated_normal import HostTruncatedNormal
from albert_keras.layers.shared_transformer_encoder import SharedTransformerEncoder
from albert_keras.models.albert_model_base import AlbertModelBase
from albert_keras.models.input_selection import select_inputs
from albert_keras.models.lora import (
    enable_lora,
    load_lora_weights,
    save_lora_weights,
)
from albert_keras.models.model_arguments import check_model_kwargs
from albert_keras.models.preset_loading import load_from_preset, save_to_preset
from albert_keras.models.quantized_layers import (
    QUANTIZED_LAYERS,
    quantize_again,
    quantized_config,
)


def as_config(config) -> AlbertConfig:
    """Accepts an `AlbertConfig`, an `albert_config.json` dict or a preset name."""
    if isinstance(config, AlbertConfig):
        return config
    if isinstance(config, dict):
        return AlbertConfig.from_dict(config)
    if isinstance(config, (str, os.PathLike)):
        from albert_keras.presets import ALIASES, PRESETS

        if str(config) not in PRESETS and str(config) not in ALIASES:
            from albert_keras.config_checks import closest_preset

            names = sorted(PRESETS) + sorted(ALIASES)
            close = closest_preset(config, names)
            raise ValueError(
                f"Unknown preset name {str(config)!r}."
                + (f" Did you mean {close!r}?" if close else "")
                + " `AlbertBackbone(name)` builds random weights from one of our "
                f"preset names: {', '.join(names)}. To load weights (a file, a "
                "folder, a keras-hub preset saved with `save_to_preset`), use "
                f"`AlbertBackbone.from_preset({str(config)!r})`."
            )
        return AlbertConfig.from_preset(config)
    raise TypeError(
        "`config` must be an AlbertConfig, a dict of albert_config.json fields or "
        f"a preset name. Received: {type(config).__name__}"
    )


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertBackbone(AlbertModelBase, keras.Model):
    """The ALBERT encoder network, exactly the official `AlbertModel`.

    Inputs are a dict of int tensors [batch, length]: `token_ids`,
    `segment_ids` (token types) and `padding_mask` (1 for tokens, 0 for
    padding). Outputs are a dict: `sequence_output` [batch, length, H] and
    `pooled_output` [batch, H] (tanh dense on the first token).

    Args:
        config: `AlbertConfig`, a dict of `albert_config.json` fields, or a
            preset name such as "albert_base_v2".
        dtype: optional dtype policy, e.g. "mixed_bfloat16".

    Example:
    >>> backbone = AlbertBackbone("albert_tiny")
    >>> inputs = {
    ...     "token_ids": keras.ops.ones((2, 8), "int32"),
    ...     "segment_ids": keras.ops.zeros((2, 8), "int32"),
    ...     "padding_mask": keras.ops.ones((2, 8), "int32"),
    ... }
    >>> tuple(backbone(inputs)["pooled_output"].shape)
    (2, 64)
    """

    def __init__(self, config, dtype=None, **kwargs):
        check_model_kwargs(type(self), kwargs)
        config = as_config(config)
        _check_float_policy(dtype)
        # === Layers ===
        self.embeddings = FactorizedEmbedding(
            config.vocab_size,
            config.embedding_size,
            config.hidden_size,
            max_sequence_length=config.max_position_embeddings,
            num_segments=config.type_vocab_size,
            dropout=config.hidden_dropout_prob,
            initializer_range=config.initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        self.encoder = SharedTransformerEncoder(
            num_layers=config.num_hidden_layers,
            num_groups=config.num_hidden_groups,
            inner_group_num=config.inner_group_num,
            hidden_size=config.hidden_size,
            num_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            activation=config.hidden_act,
            dropout=config.hidden_dropout_prob,
            attention_dropout=config.attention_probs_dropout_prob,
            initializer_range=config.initializer_range,
            sharing=config.sharing,
            dtype=dtype,
            name="encoder",
        )
        self.pooler = keras.layers.Dense(
            config.hidden_size,
            activation="tanh",
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype=dtype,
            name="pooler",
        )
        # === Functional model ===
        inputs = {
            "token_ids": keras.Input((None,), dtype="int32", name="token_ids"),
            "segment_ids": keras.Input((None,), dtype="int32", name="segment_ids"),
            "padding_mask": keras.Input((None,), dtype="int32", name="padding_mask"),
        }
        x = self.embeddings(inputs["token_ids"], inputs["segment_ids"])
        x = self.encoder(x, padding_mask=inputs["padding_mask"])
        pooled = self.pooler(x[:, 0, :])
        super().__init__(
            inputs=inputs,
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype,
            **kwargs,
        )
        if dtype is not None:
            # The functional constructor ignores `dtype`: without this the
            # model would report, save and hand its heads the global policy
            # (a mixed_bfloat16 backbone reloading in float32).
            self.dtype_policy = dtype
        # === Config ===
        self.config = config

    def call(self, inputs, training=None, mask=None):
        return super().call(select_inputs(self, inputs), training=training, mask=mask)

    def get_config(self):
        return {
            "config": self.config.to_dict() | {"sharing": self.config.sharing},
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            **quantized_config(self),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        quantized = config.pop(QUANTIZED_LAYERS, None)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        backbone = cls(**config)
        quantize_again(backbone, quantized)
        return backbone

    @classmethod
    def from_preset(
        cls, preset: str, load_weights=True, dtype=None, **overrides
    ) -> AlbertBackbone:
        """A backbone with its weights, from a preset name or a saved model.

        keras-hub's meaning: `preset` is a local keras-hub preset folder, an
        official google-research release folder or `.tar.gz`, a TF1 Hub
        module folder, a transformers ALBERT folder or a `.keras` file of
        ours (its backbone is taken); the kind is detected. A bare name
        ("albert_base_v2", "base") loads the converted weights cached in
        `$ALBERT_KERAS_HOME` (default `~/.cache/albert_keras`) as
        `<name>.keras` or a folder `<name>/`; without them it refuses with
        the release URL and the `albert-convert` command that fills the
        cache. Random weights only on request: `load_weights=False`, or
        `AlbertBackbone(AlbertConfig.from_preset(name))`.

        Args:
            preset: preset name or path.
            load_weights: False builds the model with random weights.
            dtype: dtype policy of the built model.
            **overrides: config fields, with `load_weights=False` only.

        Example:
        >>> backbone = AlbertBackbone.from_preset("albert_tiny", load_weights=False)
        >>> backbone.config.num_hidden_layers
        2
        """
        if overrides and load_weights:
            raise TypeError(
                "Config overrides change the weights' shapes: pass them with "
                f"load_weights=False. Received: {sorted(overrides)}"
            )
        return load_from_preset(
            cls, preset, load_weights=load_weights, dtype=dtype, **overrides
        )

    def save_to_preset(self, preset_dir, tokenizer=None) -> str:
        """Writes the backbone as a keras-hub preset folder.

        `keras_hub.models.AlbertBackbone.from_preset(preset_dir)` loads it
        (and `keras_hub.models.AlbertTokenizer.from_preset(preset_dir)` the
        tokenizer, when one is given); `AlbertBackbone.from_preset` too.
        Configs keras-hub cannot represent (ReLU, `sharing` "attention" or
        "ffn", groups that do not divide the layers) raise `ValueError`.
        Needs keras-hub installed.

        Args:
            preset_dir: the folder (an earlier preset there is replaced; one
                holding other files is refused, `ConversionError`).
            tokenizer: optional `AlbertTokenizer` (SentencePiece) or the path
                of its `.model`, saved as `assets/tokenizer/vocabulary.spm`.

        Example:
        >>> backbone = AlbertBackbone("albert_tiny")
        >>> backbone.save_to_preset("tiny_preset")  # doctest: +SKIP
        'tiny_preset'
        """
        return save_to_preset(self, preset_dir, tokenizer=tokenizer)

    def enable_lora(self, rank: int, target_layer_names=None) -> int:
        """Trains rank-`rank` LoRA adapters on the attention, nothing else of it.

        Enables Keras LoRA (`keras.layers.Dense.enable_lora`) on the query
        and value projections of every unique attention layer of the encoder
        and freezes the rest of the backbone: embeddings, key and output
        projections, FFN, LayerNorms, pooler, and the query and value biases
        and kernels themselves (only the adapters A [H, rank] and B [rank, H]
        train, B starting at zero, so the outputs are unchanged at first).
        Shared layers have one attention layer per group: the default ALBERT
        (all 12 layers in one group) gets one pair of adapters per projection,
        used by every layer. Layers outside the backbone (a task head) keep
        their `trainable` setting. Call it after the pretrained weights are
        loaded; saving merges the adapters into the kernels (a saved model is
        a plain backbone; after `quantize("int8")` the merged kernel is
        quantized again, so the loaded outputs move by int8 rounding, ~1e-4
        on albert_tiny).

        Args:
            rank: int. The LoRA rank (at least 1, below `hidden_size`).
            target_layer_names: optional list of the dense layers to adapt,
                as keras-hub's `enable_lora` takes it: among "query", "key",
                "value", "output" (the attention's and the FFN's),
                "intermediate", "projection", "pooler"; keras-hub's
                "query_dense", "value_dense" are read as "query", "value".
                None: "query" and "value".

        Returns:
            The number of adapter parameters.

        Example:
        >>> backbone = AlbertBackbone("albert_tiny")
        >>> backbone.enable_lora(4) == 4 * (64 + 64) * 2
        True
        >>> len(backbone.trainable_weights)
        4
        """
        return enable_lora(self, rank, target_layer_names)

    def freeze_embeddings(self) -> int:
        """Stops training the embedding tables and their LayerNorm.

        The word, position and segment tables (V x E and smaller) and the
        LayerNorm on their sum keep their values; the E -> H projection and
        the encoder train (transformers' `model.albert.embeddings`, frozen
        with `requires_grad_(False)`, holds the same variables). On a small
        data set this keeps the vocabulary's pretrained geometry; on
        ALBERT-base it is 3.9M of the 11.7M parameters.

        Returns:
            The number of parameters frozen.

        Example:
        >>> backbone = AlbertBackbone("albert_tiny")  # V=1000, 128 positions, E=32
        >>> backbone.freeze_embeddings() == (1000 + 128 + 2 + 2) * 32
        True
        """
        frozen = 0
        layer = self.embeddings
        tables = (
            layer.word_embeddings,
            layer.token_type_embeddings,
            layer.position_embeddings,
        )
        for variable in (*tables, *layer.layer_norm.weights):
            variable.trainable = False
            frozen += math.prod(variable.shape)
        return frozen

    def save_lora_weights(self, filepath) -> str:
        """Writes the LoRA adapters alone (KB, not the model) to `filepath`
        (ending `.lora.h5`, as keras-hub's), through a temporary file.

        Example:
        >>> import os, tempfile
        >>> backbone = AlbertBackbone("albert_tiny")
        >>> _ = backbone.enable_lora(2)
        >>> path = os.path.join(tempfile.mkdtemp(), "adapters.lora.h5")
        >>> clone = AlbertBackbone("albert_tiny")  # the same base weights, loaded
        >>> clone.load_lora_weights(backbone.save_lora_weights(path))
        >>> len(clone.trainable_weights)
        4
        """
        return save_lora_weights(self, filepath)

    def load_lora_weights(self, filepath) -> None:
        """Loads adapters `save_lora_weights` wrote onto this backbone's base
        weights; LoRA is enabled at the file's rank and layers if it is off."""
        load_lora_weights(self, filepath)

    def outputs_at(self, inputs, positions, training=None):
        """The backbone outputs, the sequence output only at `positions`.

        Equal to `sequence_output` gathered at `positions` (and the same
        `pooled_output`), but the final block runs its queries and FFN only
        on those rows and on `[CLS]`: with 20 predictions in 128 tokens this
        skips most of the last layer. `AlbertPretrainer` trains through it.

        Args:
            inputs: dict with `token_ids`, `segment_ids`, `padding_mask`.
            positions: int tensor [batch, P].
            training: bool, for dropout.

        Returns: dict with `sequence_output` [batch, P, H] and
        `pooled_output` [batch, H].

        Example:
        >>> backbone = AlbertBackbone("albert_tiny")
        >>> ids = keras.ops.ones((2, 8), "int32")
        >>> inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids}
        >>> out = backbone.outputs_at(inputs, keras.ops.zeros((2, 3), "int32"))
        >>> tuple(out["sequence_output"].shape)
        (2, 3, 64)
        """
        positions = ops.cast(positions, "int32")
        cls_row = ops.zeros_like(positions[:, :1])
        x = self.embeddings(
            ops.convert_to_tensor(inputs["token_ids"]),
            ops.convert_to_tensor(inputs["segment_ids"]),
            training=training,
        )
        x = self.encoder(
            x,
            padding_mask=ops.convert_to_tensor(inputs["padding_mask"]),
            training=training,
            output_positions=ops.concatenate([cls_row, positions], axis=1),
        )
        return {"sequence_output": x[:, 1:], "pooled_output": self.pooler(x[:, 0])}

    def layer_outputs(self, inputs, training=False):
        """Every intermediate output, eagerly, for inspection and tests.

        Returns a dict: `embedding_output` (E wide, after the LayerNorm, the
        official `get_embedding_output()`), `encoder_layers` (the list of every
        block's output, the official `get_all_encoder_layers()`),
        `sequence_output` and `pooled_output`.
        """
        projected, unprojected = self.embeddings(
            ops.convert_to_tensor(inputs["token_ids"]),
            ops.convert_to_tensor(inputs["segment_ids"]),
            training=training,
            return_unprojected=True,
        )
        layers = self.encoder(
            projected,
            padding_mask=ops.convert_to_tensor(inputs["padding_mask"]),
            training=training,
            return_all_layers=True,
        )
        return {
            "embedding_output": unprojected,
            "encoder_layers": layers,
            "sequence_output": layers[-1],
            "pooled_output": self.pooler(layers[-1][:, 0, :]),
        }


def _check_float_policy(dtype) -> None:
    """Refuses a dtype policy whose variables are not floating point (an
    "int32" policy failed deep in a weight initializer)."""
    if dtype is None:
        return
    try:
        policy = keras.dtype_policies.get(dtype)
    except ValueError as e:
        raise ValueError(f"Unknown dtype policy {dtype!r}: {e}") from None
    if "float" not in str(policy.variable_dtype):
        raise ValueError(
            "An ALBERT backbone computes in floating point: give dtype= a float "
            'policy ("float32", "bfloat16", "mixed_bfloat16", '
            f'"mixed_float16"). Received: dtype={dtype!r}'
        )
