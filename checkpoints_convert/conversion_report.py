"""`ConversionReport`: what `load_official_checkpoint` did."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ConversionReport:
    """What a conversion did, attached to the model as `model.conversion_report`.

    Attributes:
        checkpoint: the prefix read; `prefix_choice` says how it was found.
        config_source: where the config came from.
        model: the Keras class built.
        loaded: official names assigned to Keras weights (from a `.keras`
            file: the Keras weight paths kept).
        skipped_heads: head variables in the checkpoint the model does not
            have.
        ignored: optimizer slots, `global_step` and loss-scale state.
        new_heads: heads of the model absent from the checkpoint, left at
            their initialization (e.g. a classifier on a pretraining release).
        vocab_path: the release's SentencePiece model or WordPiece vocabulary.

    Example:
    >>> model = load_official_checkpoint("albert_base_v2")  # doctest: +SKIP
    >>> print(model.conversion_report.summary())  # doctest: +SKIP
    checkpoint: albert_base_v2/model.ckpt-best (the only one)
    config: albert_base_v2/albert_config.json
    AlbertBackbone: loaded 25 variables
    skipped 7 head variables the model has no head for: cls/predictions, ...
    """

    checkpoint: str
    prefix_choice: str
    config_source: str
    model: str
    loaded: tuple[str, ...]
    skipped_heads: tuple[str, ...]
    ignored: tuple[str, ...]
    new_heads: tuple[str, ...]
    vocab_path: str | None

    def summary(self) -> str:
        lines = [
            f"checkpoint: {self.checkpoint} ({self.prefix_choice})",
            f"config: {self.config_source}",
            f"{self.model}: loaded {len(self.loaded)} variables",
        ]
        if self.skipped_heads:
            heads = sorted({_head_of(n) for n in self.skipped_heads})
            lines.append(
                f"skipped {len(self.skipped_heads)} head variables the model has "
                f"no head for: {', '.join(heads)}"
            )
            models = sorted({_TASK_HEADS[h] for h in heads if h in _TASK_HEADS})
            lines += [
                f"  a fine-tuning head: build --model {model} to keep it"
                for model in models
            ]
        if self.ignored:
            lines.append(
                f"ignored {len(self.ignored)} optimizer / training-state variables"
            )
        if self.new_heads:
            lines.append(
                f"not in the checkpoint, newly initialized: {', '.join(self.new_heads)}"
            )
        return "\n".join(lines)


# The models that keep a fine-tuning head: official names, then the Keras
# layers of a .keras source.
_TASK_HEADS = {
    "root output_weights/output_bias": "classifier or multiple_choice",
    "cls/squad": "span_qa",
    "start_logits": "squad_v2",
    "end_logits": "squad_v2",
    "answer_class": "squad_v2",
    "classifier": "classifier",
    "choice_head": "multiple_choice",
    "span_head": "span_qa",
    "squad_v2_head": "squad_v2",
    "token_classifier": "token_classifier",
}


def _head_of(name):
    if name.startswith("cls/"):
        return "/".join(name.split("/")[:2])
    return name.split("/")[0] if "/" in name else "root output_weights/output_bias"
