"""JSON read strictly: an object that gives one key twice is refused (``json`` keeps the last
silently, so a hand-edited file could run on a value its author overwrote by mistake)."""

from __future__ import annotations

import json
from typing import Any


class RepeatedKeyError(ValueError):
    """A JSON object gives one key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key '{key}' is given twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for `json.loads` that raises `RepeatedKeyError` on a repeated key."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise RepeatedKeyError(key)
        obj[key] = value
    return obj


def loads_strict(text: str | bytes) -> Any:
    """`json.loads`, refusing a repeated key.

    Raises:
        ValueError: not JSON (`json.JSONDecodeError`), a repeated key (`RepeatedKeyError`), or an
            integer of more digits than Python reads.
        RecursionError: nested too deeply.
    """
    return json.loads(text, object_pairs_hook=unique_keys)
