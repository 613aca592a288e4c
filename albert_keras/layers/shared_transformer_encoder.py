"""`SharedTransformerEncoder`: L layers over G parameter groups."""

import keras

from albert_keras.config import SHARING_MODES
from albert_keras.layers.albert_attention import AlbertAttention
from albert_keras.layers.albert_feed_forward import AlbertFeedForward
from albert_keras.layers.transformer_block import TransformerBlock


def block_names(num_layers, inner_group_num):
    """Every name a `SharedTransformerEncoder` may give its `TransformerBlock`s.

    Whole shared blocks ("all", "none") are `group_{owner}_inner_group_{i}`,
    blocks that join a shared and an own sub-block are
    `layer_{l}_inner_group_{i}`; the list holds both for every owner.

    Example:
    >>> block_names(2, 1)
    ['group_0_inner_group_0', 'layer_0_inner_group_0', \
'group_1_inner_group_0', 'layer_1_inner_group_0']
    """
    return [
        f"{kind}_{owner}_inner_group_{inner}"
        for owner in range(num_layers)
        for inner in range(inner_group_num)
        for kind in ("group", "layer")
    ]


@keras.saving.register_keras_serializable(package="albert_keras")
class SharedTransformerEncoder(keras.layers.Layer):
    """ALBERT's encoder: `num_layers` layers whose parameters come from groups.

    Layer `l` uses group `int(l / L * G)` (the official float formula, also
    when L is not a multiple of G) and runs `inner_group_num` blocks, each with
    its own parameters inside the group. `sharing` says what a group shares
    (the paper's Table 4):

    - "all": attention and FFN shared by the layers of a group (ALBERT);
    - "attention": attention shared within a group, FFN per layer;
    - "ffn": FFN shared within a group, attention per layer;
    - "none": every layer its own parameters (BERT).

    Args:
        num_layers: int. L.
        num_groups: int. G, at most L.
        inner_group_num: int. Blocks per layer.
        hidden_size, num_heads, intermediate_size, activation, dropout,
            attention_dropout, initializer_range: as in `TransformerBlock`.
        sharing: str. One of "all", "attention", "ffn", "none".

    Call arguments:
        inputs: float tensor [batch, length, H].
        padding_mask: tensor [batch, length], 1 for tokens, 0 for padding.
        return_all_layers: bool. Return the list of every block's output
            (L * inner_group_num tensors, the official `all_encoder_layers`)
            instead of the last one.
        output_positions: optional int tensor [batch, P]: the final block
            computes its output only at these positions (its keys and values
            still see every position), so the result is [batch, P, H], equal
            to those rows of the full output, for less work. Pretraining
            passes `[CLS]` and the masked positions: no head reads the rest.

    Example:
    >>> encoder = SharedTransformerEncoder(4, 2, 1, 64, 4, 256)
    >>> x = keras.ops.ones((2, 8, 64))
    >>> tuple(encoder(x, keras.ops.ones((2, 8), "int32")).shape)
    (2, 8, 64)
    """

    def __init__(
        self,
        num_layers,
        num_groups,
        inner_group_num,
        hidden_size,
        num_heads,
        intermediate_size,
        activation="gelu",
        dropout=0.0,
        attention_dropout=0.0,
        initializer_range=0.02,
        sharing="all",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if sharing not in SHARING_MODES:
            raise ValueError(
                f"Unknown `sharing`. Received: sharing={sharing!r}. "
                f"Allowed: {', '.join(SHARING_MODES)}"
            )
        if not 1 <= num_groups <= num_layers:
            raise ValueError(
                "`num_groups` must be between 1 and `num_layers`. Received: "
                f"num_groups={num_groups}, num_layers={num_layers}"
            )
        self.num_layers = num_layers
        self.num_groups = num_groups
        self.inner_group_num = inner_group_num
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range
        self.sharing = sharing

        self._build_blocks()

    def _build_blocks(self):
        """Creates the unique blocks and the layer -> block layout (in the
        order the weights have always been created: saved files depend on it)."""
        common = dict(
            dtype=self.dtype_policy,
            initializer_range=self.initializer_range,
            dropout=self.dropout,
        )
        block_args = (self.hidden_size, self.num_heads, self.intermediate_size)
        block_kwargs = dict(
            activation=self.activation,
            attention_dropout=self.attention_dropout,
            **common,
        )
        # Which owner (a group or a layer) holds each sub-block of layer l.
        attention_owner, ffn_owner = self._owners()
        attentions, ffns = {}, {}
        self.blocks = []  # unique blocks, in creation order
        # layout[layer][inner] = index into self.blocks; plain ints, so nothing
        # here is tracked twice (and SavedModel export accepts it).
        self._layout = [[] for _ in range(self.num_layers)]
        owned_blocks = {}  # (owner, inner) -> index, for "all" and "none"
        for layer_index in range(self.num_layers):
            for inner in range(self.inner_group_num):
                a_key = (attention_owner(layer_index), inner)
                f_key = (ffn_owner(layer_index), inner)
                if self.sharing in ("all", "none"):
                    # Attention and FFN have the same owner: share whole blocks.
                    if a_key not in owned_blocks:
                        owned_blocks[a_key] = len(self.blocks)
                        self.blocks.append(
                            TransformerBlock(
                                *block_args,
                                name=f"group_{a_key[0]}_inner_group_{a_key[1]}",
                                **block_kwargs,
                            )
                        )
                    self._layout[layer_index].append(owned_blocks[a_key])
                    continue
                if a_key not in attentions:
                    attentions[a_key] = AlbertAttention(
                        self.hidden_size,
                        self.num_heads,
                        attention_dropout=self.attention_dropout,
                        name=f"attention_{a_key[0]}_inner_group_{a_key[1]}",
                        **common,
                    )
                if f_key not in ffns:
                    ffns[f_key] = AlbertFeedForward(
                        self.hidden_size,
                        self.intermediate_size,
                        activation=self.activation,
                        name=f"feed_forward_{f_key[0]}_inner_group_{f_key[1]}",
                        **common,
                    )
                self.blocks.append(
                    TransformerBlock(
                        *block_args,
                        attention=attentions[a_key],
                        feed_forward=ffns[f_key],
                        name=f"layer_{layer_index}_inner_group_{inner}",
                        **block_kwargs,
                    )
                )
                self._layout[layer_index].append(len(self.blocks) - 1)

    def group_index(self, layer_index):
        """The official group of a layer: `int(l / L * G)` in float arithmetic."""
        return int(layer_index / self.num_layers * self.num_groups)

    def _owners(self):
        def by_group(layer_index):
            return self.group_index(layer_index)

        def by_layer(layer_index):
            return layer_index

        return {
            "all": (by_group, by_group),
            "none": (by_layer, by_layer),
            "attention": (by_group, by_layer),
            "ffn": (by_layer, by_group),
        }[self.sharing]

    def block(self, layer_index, inner_index=0):
        """The `TransformerBlock` that runs inner block `inner_index` of a layer."""
        return self.blocks[self._layout[layer_index][inner_index]]

    def build(self, input_shape):
        for block in self.blocks:
            block.build(input_shape)
        self.built = True

    def call(
        self,
        inputs,
        padding_mask=None,
        training=None,
        return_all_layers=False,
        output_positions=None,
    ):
        x = inputs
        outputs = []
        last = (self.num_layers - 1, self.inner_group_num - 1)
        for layer_index in range(self.num_layers):
            for inner in range(self.inner_group_num):
                block = self.block(layer_index, inner)
                # Only the final block can skip rows: every earlier output row
                # feeds the next block's keys and values.
                positions = output_positions if (layer_index, inner) == last else None
                x = block(
                    x,
                    padding_mask=padding_mask,
                    training=training,
                    query_positions=positions,
                )
                outputs.append(x)
        return outputs if return_all_layers else x

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "num_layers": self.num_layers,
            "num_groups": self.num_groups,
            "inner_group_num": self.inner_group_num,
            "hidden_size": self.hidden_size,
            "num_heads": self.num_heads,
            "intermediate_size": self.intermediate_size,
            "activation": self.activation,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "initializer_range": self.initializer_range,
            "sharing": self.sharing,
        }
