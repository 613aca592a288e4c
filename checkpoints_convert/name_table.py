"""The name table: official TF1 checkpoint names <-> our Keras weights.

Each row of `NAME_TABLE` is one official variable name pattern (`{g}` is the
group, `{i}` the inner group), the getter of the Keras variable that holds it,
the transform between the two layouts (None, or `TRANSPOSE` for heads the
official code stores [out, in] where our `Dense` kernels are [in, out]), the
config field behind each official dimension (for error messages), and the part
of the model it belongs to. `official_weights` (official_layout.py) expands
the table for one model; the loader and the writer both use it, so they
cannot disagree.
"""

from __future__ import annotations

from checkpoints_convert.name_row import TRANSPOSE, NameRow, Transpose, WeightGetter

__all__ = ["NAME_TABLE", "TRANSPOSE", "NameRow", "Transpose", "WeightGetter"]


def _backbone(path):
    return WeightGetter("backbone", path)


def _block(path):
    return WeightGetter("block", path)


def _head(path):
    return WeightGetter("model", path)


_BLOCK = "bert/encoder/transformer/group_{g}/inner_group_{i}/"
_H, _E, _I = "hidden_size", "embedding_size", "intermediate_size"


def _dense_head(prefix, layer, outputs, part):
    """The rows of a dense head stored as official heads are: `output_weights`
    [outputs, H] (our kernel transposed) and `output_bias`, under `prefix`.

    Example:
    >>> [row[0] for row in _dense_head("cls/squad/", "span_head", "n", "span_qa")]
    ['cls/squad/output_weights', 'cls/squad/output_bias']
    """
    return [
        (
            f"{prefix}output_weights",
            _head(f"{layer}.kernel"),
            TRANSPOSE,
            (outputs, _H),
            part,
        ),
        (f"{prefix}output_bias", _head(f"{layer}.bias"), None, (outputs,), part),
    ]


NAME_TABLE: tuple[NameRow, ...] = tuple(
    NameRow(*row)
    for row in [
        # official name pattern, Keras weight, transform, official dims, part
        (
            "bert/embeddings/word_embeddings",
            _backbone("embeddings.word_embeddings"),
            None,
            ("vocab_size", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/token_type_embeddings",
            _backbone("embeddings.token_type_embeddings"),
            None,
            ("type_vocab_size", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/position_embeddings",
            _backbone("embeddings.position_embeddings"),
            None,
            ("max_position_embeddings", _E),
            "embeddings",
        ),
        (
            "bert/embeddings/LayerNorm/beta",
            _backbone("embeddings.layer_norm.beta"),
            None,
            (_E,),
            "embeddings",
        ),
        (
            "bert/embeddings/LayerNorm/gamma",
            _backbone("embeddings.layer_norm.gamma"),
            None,
            (_E,),
            "embeddings",
        ),
        # Only when embedding_size != hidden_size.
        (
            "bert/encoder/embedding_hidden_mapping_in/kernel",
            _backbone("embeddings.projection.kernel"),
            None,
            (_E, _H),
            "projection",
        ),
        (
            "bert/encoder/embedding_hidden_mapping_in/bias",
            _backbone("embeddings.projection.bias"),
            None,
            (_H,),
            "projection",
        ),
        (
            _BLOCK + "attention_1/self/query/kernel",
            _block("attention.query.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/query/bias",
            _block("attention.query.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/key/kernel",
            _block("attention.key.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/key/bias",
            _block("attention.key.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/value/kernel",
            _block("attention.value.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/self/value/bias",
            _block("attention.value.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/output/dense/kernel",
            _block("attention.output_dense.kernel"),
            None,
            (_H, _H),
            "encoder",
        ),
        (
            _BLOCK + "attention_1/output/dense/bias",
            _block("attention.output_dense.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm/beta",
            _block("attention.layer_norm.beta"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm/gamma",
            _block("attention.layer_norm.gamma"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/dense/kernel",
            _block("feed_forward.intermediate.kernel"),
            None,
            (_H, _I),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/dense/bias",
            _block("feed_forward.intermediate.bias"),
            None,
            (_I,),
            "encoder",
        ),
        # The official code nests the FFN output under `intermediate/`.
        (
            _BLOCK + "ffn_1/intermediate/output/dense/kernel",
            _block("feed_forward.output_dense.kernel"),
            None,
            (_I, _H),
            "encoder",
        ),
        (
            _BLOCK + "ffn_1/intermediate/output/dense/bias",
            _block("feed_forward.output_dense.bias"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm_1/beta",
            _block("feed_forward.layer_norm.beta"),
            None,
            (_H,),
            "encoder",
        ),
        (
            _BLOCK + "LayerNorm_1/gamma",
            _block("feed_forward.layer_norm.gamma"),
            None,
            (_H,),
            "encoder",
        ),
        (
            "bert/pooler/dense/kernel",
            _backbone("pooler.kernel"),
            None,
            (_H, _H),
            "pooler",
        ),
        ("bert/pooler/dense/bias", _backbone("pooler.bias"), None, (_H,), "pooler"),
        # Pretraining heads. The MLM decoder is the word embedding, transposed
        # in the graph, so it has no row of its own.
        (
            "cls/predictions/transform/dense/kernel",
            _head("mlm_head.dense.kernel"),
            None,
            (_H, _E),
            "mlm",
        ),
        (
            "cls/predictions/transform/dense/bias",
            _head("mlm_head.dense.bias"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/transform/LayerNorm/beta",
            _head("mlm_head.layer_norm.beta"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/transform/LayerNorm/gamma",
            _head("mlm_head.layer_norm.gamma"),
            None,
            (_E,),
            "mlm",
        ),
        (
            "cls/predictions/output_bias",
            _head("mlm_head.output_bias"),
            None,
            ("vocab_size",),
            "mlm",
        ),
        # SentenceOrderHead keeps the official [2, H] layout: no transform.
        (
            "cls/seq_relationship/output_weights",
            _head("sop_head.output_weights"),
            None,
            ("sop_classes", _H),
            "sop",
        ),
        (
            "cls/seq_relationship/output_bias",
            _head("sop_head.output_bias"),
            None,
            ("sop_classes",),
            "sop",
        ),
        # run_classifier: root variables, logits = pooled @ W^T + b.
        *_dense_head("", "classifier", "num_classes", "classifier"),
        # transformers' AlbertForTokenClassification (no official head; these
        # names are ours): logits = sequence @ W^T + b at every position.
        *_dense_head(
            "token_classifier/", "token_classifier", "num_classes", "token_classifier"
        ),
        # run_squad v1: start and end logits from one [2, H] matrix.
        *_dense_head("cls/squad/", "span_head", "span_outputs", "span_qa"),
        # run_squad v2 (squad_utils.create_v2_model): tf.layers.dense kernels
        # are [in, out], the Keras layout.
        (
            "start_logits/dense/kernel",
            _head("squad_v2_head.start_dense.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        (
            "start_logits/dense/bias",
            _head("squad_v2_head.start_dense.bias"),
            None,
            ("squad_v2_score",),
            "squad_v2",
        ),
        (
            "end_logits/dense_0/kernel",
            _head("squad_v2_head.end_dense_0.kernel"),
            None,
            ("squad_v2_concat", _H),
            "squad_v2",
        ),
        (
            "end_logits/dense_0/bias",
            _head("squad_v2_head.end_dense_0.bias"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/LayerNorm/beta",
            _head("squad_v2_head.end_layer_norm.beta"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/LayerNorm/gamma",
            _head("squad_v2_head.end_layer_norm.gamma"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "end_logits/dense_1/kernel",
            _head("squad_v2_head.end_dense_1.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        (
            "end_logits/dense_1/bias",
            _head("squad_v2_head.end_dense_1.bias"),
            None,
            ("squad_v2_score",),
            "squad_v2",
        ),
        (
            "answer_class/dense_0/kernel",
            _head("squad_v2_head.answer_dense_0.kernel"),
            None,
            ("squad_v2_concat", _H),
            "squad_v2",
        ),
        (
            "answer_class/dense_0/bias",
            _head("squad_v2_head.answer_dense_0.bias"),
            None,
            (_H,),
            "squad_v2",
        ),
        (
            "answer_class/dense_1/kernel",
            _head("squad_v2_head.answer_dense_1.kernel"),
            None,
            (_H, "squad_v2_score"),
            "squad_v2",
        ),
        # run_race: the same root names as run_classifier, one score per choice.
        *_dense_head("", "choice_head", "choice_outputs", "multiple_choice"),
    ]
)
