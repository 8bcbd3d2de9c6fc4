"""Call strings such as ``FindRestaurants(city="San Jose", price_range="cheap")``, parsed with
`ast` into a name and literal arguments; nothing is ever evaluated."""

from __future__ import annotations

import ast
from typing import Any


class CallParseError(ValueError):
    """A call string that is not ``Name(arg=literal, ...)``."""


def parse_call(text: str) -> dict[str, Any]:
    """Parse ``Func(arg="v", n=2)`` into ``{"name": "Func", "arguments": {...}}``.

    Raises:
        CallParseError: not a single call with keyword literal arguments, a keyword given
            twice (``ast`` accepts ``F(a=1, a=2)``; we never keep one of them silently), or a
            literal JSON cannot hold (bytes, a set, a complex number: calls are stored as JSON).
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    # CPython's parser raises MemoryError, not SyntaxError, on a few thousand nested operators.
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise CallParseError(f"not a call: {text!r}") from exc
    if not isinstance(node, ast.Call) or node.args:
        raise CallParseError(f"expected Name(arg=value, ...): {text!r}")
    name = _dotted(node.func)
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError(f"** arguments are not allowed: {text!r}")
        if keyword.arg in arguments:
            raise CallParseError(f"argument '{keyword.arg}' given twice: {text!r}")
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, RecursionError) as exc:  # TypeError: {[1]: 2}
            raise CallParseError(f"argument '{keyword.arg}' is not a literal: {text!r}") from exc
        if not _json_value(arguments[keyword.arg]):
            raise CallParseError(f"argument '{keyword.arg}' is not a JSON value: {text!r}")
    return {"name": name, "arguments": arguments}


def _json_value(value: Any) -> bool:
    """Whether a literal is text, a number, a boolean, None, or lists and string-keyed
    objects of those (what a stored call can hold)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                return False
            stack.extend(item.values())
        elif item is not None and not isinstance(item, (str, int, float)):
            return False  # bytes, set, frozenset, complex, Ellipsis
    return True


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise CallParseError("the called function must be a plain name")
