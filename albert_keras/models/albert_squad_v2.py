"""`AlbertSquadV2`: SQuAD 2.0 with the official answer-class head (create_v2_model)."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from albert_keras.layers.squad_v2_head import SquadV2Head
from albert_keras.models.model_arguments import check_backbone
from albert_keras.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertSquadV2(TaskModel):
    """Extractive QA with unanswerable questions: the official ALBERT v2 head.

    `SquadV2Head` on the sequence output: start log-probabilities, end
    log-probabilities conditioned on a start, the no-answer logit, and at
    inference the start_n_top x end_n_top beam that `decode_spans(...,
    head="v2")` turns into answers. The variables load from and save to an
    official `run_squad_v2` checkpoint (`start_logits/`, `end_logits/`,
    `answer_class/`).

    Inputs: `token_ids`, `segment_ids`, `padding_mask`, `p_mask` (1 where no
    answer can be: question, `[SEP]`, padding; `AlbertSpanPacker` makes it)
    [batch, length], and `start_positions` [batch] (the gold start in
    training; may be left out at inference, it is then 0).

    Train with `AlbertSquadV2.official_losses()`: the official loss, 0.5 x
    (start + end negative log-likelihood) + 0.5 x the no-answer logistic
    loss, with targets `{"start_log_probs": start, "end_log_probs": end,
    "cls_logits": is_impossible}`.

    Args:
        backbone: `AlbertBackbone`.
        start_n_top: int. Starts in the inference beam (official 5).
        end_n_top: int. Ends per start (official 5).
        dropout: float. Answer-class dropout (official 0.1).

    Example:
    >>> from albert_keras import AlbertBackbone
    >>> model = AlbertSquadV2(AlbertBackbone("albert_tiny"), start_n_top=2)
    >>> x = {k: keras.ops.ones((1, 8), "int32") for k in
    ...      ("token_ids", "segment_ids", "padding_mask")}
    >>> x["p_mask"] = keras.ops.zeros((1, 8), "int32")
    >>> tuple(model(x)["end_top_index"].shape)
    (1, 10)
    """

    def __init__(self, backbone, start_n_top=5, end_n_top=5, dropout=0.1, **kwargs):
        check_backbone(type(self), backbone)
        config = backbone.config
        # === Layers ===
        self.backbone = backbone
        self.squad_v2_head = SquadV2Head(
            config.hidden_size,
            start_n_top=start_n_top,
            end_n_top=end_n_top,
            dropout=dropout,
            initializer_range=config.initializer_range,
            dtype=backbone.dtype_policy,
            name="squad_v2_head",
        )
        # === Functional model ===
        inputs = self.backbone_inputs()
        inputs["p_mask"] = keras.Input((None,), dtype="int32", name="p_mask")
        inputs["start_positions"] = keras.Input(
            (), dtype="int32", name="start_positions"
        )
        sequence = backbone(inputs)["sequence_output"]
        outputs = self.squad_v2_head(
            sequence, inputs["p_mask"], inputs["start_positions"]
        )
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # === Config ===
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout = dropout

    def __call__(self, inputs, *args, **kwargs):
        # Before Keras checks the inputs: predicting needs no start position.
        inputs = self._with_start_positions(inputs, kwargs.get("training"))
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        # On JAX, `predict` runs `stateless_call`, which skips `__call__`.
        inputs = self._with_start_positions(inputs, training)
        return super().call(inputs, training=training, mask=mask)

    @staticmethod
    def _with_start_positions(inputs, training):
        """`inputs` with `start_positions` 0 where inference left it out."""
        if not isinstance(inputs, dict) or "start_positions" in inputs:
            return inputs
        if training:
            raise ValueError(
                "Training AlbertSquadV2 needs `start_positions` in its "
                "inputs: the gold start [batch] (the target of "
                "`start_log_probs`), on which the end log-probabilities "
                "are conditioned. Only inference may leave it out (0). "
                f"Received keys: {sorted(inputs)}"
            )
        token_ids = inputs["token_ids"]
        if ops.is_tensor(token_ids) or isinstance(token_ids, keras.KerasTensor):
            zeros = ops.zeros((ops.shape(token_ids)[0],), "int32")
        else:  # NumPy inputs: Keras refuses a call mixing them with tensors
            zeros = np.zeros((np.shape(token_ids)[0],), "int32")
        return {**inputs, "start_positions": zeros}

    @staticmethod
    def official_losses():
        """(losses, loss_weights) for `compile`: the official v2 training loss."""
        nll = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        losses = {
            # Log-probabilities are logits whose log-sum-exp is 0.
            "start_log_probs": nll,
            "end_log_probs": keras.losses.SparseCategoricalCrossentropy(
                from_logits=True
            ),
            "cls_logits": keras.losses.BinaryCrossentropy(from_logits=True),
        }
        weights = {"start_log_probs": 0.5, "end_log_probs": 0.5, "cls_logits": 0.5}
        return losses, weights

    def _task_config(self):
        return {
            "start_n_top": self.start_n_top,
            "end_n_top": self.end_n_top,
            "dropout": self.dropout,
        }
