"""`SentencePieceText`: the official ALBERT text -> pieces rules, for data creation.

What the official `tokenization.py` does with a SentencePiece model:
`preprocess_text` (collapse whitespace, NFKD, drop combining marks, optional
lowercase), then `encode_pieces`, which re-splits a piece that
ends in a digit followed by a comma ("1,000," style) so the comma stands
alone. Pieces that start with "▁" begin a word; whole-word n-gram masking
groups the rest with the word before.
"""

from __future__ import annotations

import unicodedata

SPIECE_UNDERLINE = "\u2581"


def preprocess_text(text: str, lower: bool = True) -> str:
    """The official `preprocess_text` of albert-tensorflow 1.1 (remove_space=True).

    That release does not rewrite `` and '' (later GitHub versions do).
    """
    text = " ".join(text.strip().split())
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower() if lower else text


class SentencePieceText:
    """Batch text -> official pieces and ids with a SentencePiece model.

    Args:
        model_file: the `.model` file (`<pad>`=0, `<unk>`=1, `[CLS]`=2,
            `[SEP]`=3, `[MASK]`=4 as in the releases).
        lower: lowercase in `preprocess_text` (the released models do).

    Example:
    >>> from albert_keras.sample_text import SPM_MODEL_PATH
    >>> text = SentencePieceText(SPM_MODEL_PATH)
    >>> text.encode(["Emma Woodhouse"])[0][0][:2]
    ['▁emma', '▁woodhouse']
    """

    def __init__(self, model_file: str, lower: bool = True):
        import sentencepiece as spm

        try:
            self.processor = spm.SentencePieceProcessor(model_file=model_file)
        except (OSError, RuntimeError) as e:
            raise ValueError(
                f"{model_file!r} is not a readable SentencePiece model ({e}). Pass "
                "the release's 30k-clean.model or one made by `albert-keras vocab`."
            ) from None
        self.lower = lower
        self.vocab_size = self.processor.vocab_size()
        for piece, expected in (("[CLS]", 2), ("[SEP]", 3), ("[MASK]", 4)):
            if self.processor.piece_to_id(piece) != expected:
                raise ValueError(
                    f"{model_file!r} lacks the ALBERT special tokens: {piece} should "
                    f"have id {expected}. Train it with `albert-keras vocab`."
                )
        self.cls_id, self.sep_id, self.mask_id = 2, 3, 4

    def _split_digit_comma(self, pieces):
        # The official `encode_pieces` rule.
        out = []
        for piece in pieces:
            if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
                sub = self.processor.encode(
                    piece[:-1].replace(SPIECE_UNDERLINE, ""), out_type=str
                )
                if (
                    piece[0] != SPIECE_UNDERLINE
                    and sub
                    and sub[0][0] == SPIECE_UNDERLINE
                ):
                    if len(sub[0]) == 1:
                        sub = sub[1:]
                    else:
                        sub[0] = sub[0][1:]
                sub.append(piece[-1])
                out.extend(sub)
            else:
                out.append(piece)
        return out

    def encode(self, texts: list[str]) -> list[tuple[list[str], list[int]]]:
        """(pieces, ids) of each text, official preprocessing included."""
        cleaned = [preprocess_text(t, self.lower) for t in texts]
        batches = self.processor.encode(cleaned, out_type=str)
        result = []
        for pieces in batches:
            pieces = self._split_digit_comma(pieces)
            result.append((pieces, [self.processor.piece_to_id(p) for p in pieces]))
        return result
