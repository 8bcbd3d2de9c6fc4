"""Token counts for MPT's cost metric: the agent model's tokenizer where its provider has one,
else characters / 4, and which of the two counted."""

from __future__ import annotations

import math

from rapport.llm import Model

TOKEN_METHOD = "approx: ceil(characters / 4)"
"""The fallback count, used where the agent model's provider has no tokenizer."""


def count_tokens(text: str) -> int:
    """Approximate tokens of a text (see `TOKEN_METHOD`)."""
    return math.ceil(len(text) / 4)


def tokenizer_method(model_name: str) -> str:
    """The ``token_method`` of counts made with a model's tokenizer."""
    return f"tokenizer: {model_name}"


class TokenCounter:
    """Counts tokens with a model's tokenizer where its provider has one (`Model.count_tokens`),
    else with `count_tokens`; each count says which (`TOKEN_METHOD` or `tokenizer_method`).

    The full histories it counts are kept by text, since every instance of a user divides by
    the same one.

    Args:
        model: the agent model (None: always the fallback).
    """

    def __init__(self, model: Model | None) -> None:
        self.model = model
        self._kept: dict[str, tuple[int, str]] = {}

    def count(self, text: str) -> tuple[int, str]:
        """(tokens, method) of a text."""
        n = self.model.count_tokens(text) if self.model is not None else None
        if n is None or self.model is None:
            return count_tokens(text), TOKEN_METHOD
        return n, tokenizer_method(self.model.name)

    def count_kept(self, text: str) -> tuple[int, str]:
        """`count`, remembered by text (for the full histories)."""
        if text not in self._kept:
            self._kept[text] = self.count(text)
        return self._kept[text]
