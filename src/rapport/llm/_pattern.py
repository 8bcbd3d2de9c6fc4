"""Strings that match a regular expression, drawn from a random stream (``scripted/auto``
fills a schema's ``pattern`` and ``format`` with them)."""

from __future__ import annotations

import random
import re
import string
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_EXTRA_REPEATS = 3
"""How far past its minimum an open repeat (``*``, ``+``, ``{2,}``) goes."""
_ALPHABET = string.ascii_letters + string.digits + " -_.:,/"
_CATEGORIES = {
    sre.CATEGORY_DIGIT: string.digits,
    sre.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre.CATEGORY_SPACE: " ",
    sre.CATEGORY_NOT_DIGIT: string.ascii_letters,
    sre.CATEGORY_NOT_WORD: " -.",
    sre.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
}

FORMATS = {
    "date": r"20[1-3][0-9]-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])",
    "time": r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]",
    "date-time": r"20[1-3][0-9]-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):"
    r"[0-5][0-9]:[0-5][0-9]Z",
    "email": r"[a-z]{3,8}@[a-z]{3,8}\.(com|org)",
    "uri": r"https://[a-z]{3,8}\.(com|org)/[a-z]{0,8}",
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
}
"""JSON-schema string formats, as patterns whose matches are valid values."""


def matching(pattern: str, rng: random.Random, *, tries: int = 20) -> str | None:
    """A string `re.search` finds `pattern` in, or None (a pattern this cannot satisfy:
    lookarounds that exclude what was drawn, say)."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return None
    for _ in range(tries):
        groups: dict[int, str] = {}
        text = _sequence(list(parsed), rng, groups)
        if re.search(pattern, text):
            return text
    return None


def _sequence(items: list[tuple[Any, Any]], rng: random.Random, groups: dict[int, str]) -> str:
    return "".join(_item(op, arg, rng, groups) for op, arg in items)


def _item(op: Any, arg: Any, rng: random.Random, groups: dict[int, str]) -> str:
    if op is sre.LITERAL:
        return chr(arg)
    if op is sre.NOT_LITERAL:
        return rng.choice([c for c in _ALPHABET if ord(c) != arg])
    if op is sre.ANY:
        return rng.choice(string.ascii_letters)
    if op is sre.IN:
        return _one_of(arg, rng)
    if op is sre.CATEGORY:
        return rng.choice(_CATEGORIES.get(arg, "a"))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
        low, high, body = arg
        top = low + _EXTRA_REPEATS if high is sre.MAXREPEAT else min(high, low + _EXTRA_REPEATS)
        return "".join(_sequence(list(body), rng, groups) for _ in range(rng.randint(low, top)))
    if op is sre.SUBPATTERN:
        group, _, _, body = arg
        text = _sequence(list(body), rng, groups)
        if group is not None:
            groups[group] = text
        return text
    if op is sre.BRANCH:
        return _sequence(list(rng.choice(arg[1])), rng, groups)
    if op is sre.GROUPREF:
        return groups.get(arg, "")
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(arg), rng, groups)
    return ""  # anchors, lookarounds and conditionals take no characters here


def _one_of(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    """A character of a class such as ``[0-9a-f]`` or ``[^,]``."""
    if items and items[0][0] is sre.NEGATE:
        banned = items[1:]
        allowed = [c for c in _ALPHABET if not any(_in(c, op, arg) for op, arg in banned)]
        return rng.choice(allowed or ["\u00e9"])
    chars: list[str] = []
    for op, arg in items:
        if op is sre.LITERAL:
            chars.append(chr(arg))
        elif op is sre.RANGE:
            low, high = arg
            chars.extend(chr(c) for c in range(low, min(high, low + 94) + 1))
        elif op is sre.CATEGORY:
            chars.extend(_CATEGORIES.get(arg, ""))
    return rng.choice(chars or ["a"])


def _in(char: str, op: Any, arg: Any) -> bool:
    if op is sre.LITERAL:
        return ord(char) == arg
    if op is sre.RANGE:
        return arg[0] <= ord(char) <= arg[1]
    if op is sre.CATEGORY:
        return char in _CATEGORIES.get(arg, "")
    return False
