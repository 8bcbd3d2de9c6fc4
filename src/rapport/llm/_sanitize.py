"""The provider boundary: what a model returns is made safe to keep before anything uses it.

A server may return text no JSON encoder accepts (a lone UTF-16 surrogate), megabytes of
output, or tool arguments nested thousands of levels deep. Each would crash whatever touches
it later (the record's serialization, the store commit, a recursive walk). Every completion
passes `sanitize_completion` once, before the cache and before any component sees it:
invalid code points become U+FFFD, text is cut to `MAX_TEXT_CHARS` (the original length is
kept on the completion), and tool arguments are cut to `MAX_ARG_DEPTH` levels and
`MAX_ARG_ITEMS` values.
"""

from __future__ import annotations

import re
from typing import Any

from rapport.log import ToolCall

MAX_TEXT_CHARS = 100_000
"""Longest text kept from one completion (about 25k tokens: far past any `max_tokens`)."""
MAX_ARG_DEPTH = 32
"""Deepest nesting kept in a tool call's arguments; deeper values become ``"..."``."""
MAX_ARG_ITEMS = 10_000
"""Most values kept in one tool call's arguments; the rest are dropped."""
MAX_TOOL_CALLS = 64
"""Most tool calls kept from one completion."""
CUT = "..."


def clean_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` with invalid code points replaced and cut to ``limit`` characters."""
    if len(text) > limit:
        text = text[:limit]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Joins a valid surrogate pair into its character; a lone one becomes U+FFFD.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean_value(value: Any, *, depth: int = MAX_ARG_DEPTH, items: int = MAX_ARG_ITEMS) -> Any:
    """A JSON-like value with its strings cleaned, cut to ``depth`` levels and ``items`` values.

    Iterative, so it is safe on any depth.
    """
    budget = [items]
    root: list[Any] = [None]
    # Each entry: (source value, container to write into, key/index, level).
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        src, dest, key, level = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            _put(dest, key, CUT)
            continue
        if isinstance(src, dict):
            if level >= depth:
                _put(dest, key, CUT)
                continue
            out: dict[str, Any] = {}
            _put(dest, key, out)
            for k, v in list(src.items())[: max(budget[0], 0)]:
                name = clean_text(str(k), 1_000)
                out[name] = None
                stack.append((v, out, name, level + 1))
        elif isinstance(src, (list, tuple)):
            if level >= depth:
                _put(dest, key, CUT)
                continue
            seq: list[Any] = [None] * min(len(src), max(budget[0], 0))
            _put(dest, key, seq)
            for i in range(len(seq)):
                stack.append((src[i], seq, i, level + 1))
        elif isinstance(src, str):
            _put(dest, key, clean_text(src))
        elif src is None or isinstance(src, (bool, int, float)):
            _put(dest, key, src)
        else:
            _put(dest, key, clean_text(str(src)))
    return root[0]


def _put(dest: Any, key: Any, value: Any) -> None:
    dest[key] = value


def clean_tool_call(call: ToolCall) -> ToolCall:
    """A tool call with a clean name and id and bounded arguments."""
    arguments = clean_value(call.arguments)
    return call.model_copy(
        update={
            "id": clean_text(call.id, 200),
            "name": clean_text(call.name, 200),
            "arguments": arguments if isinstance(arguments, dict) else {},
        }
    )


_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]+@")
_SECRET_PARAMS = re.compile(
    r"(?P<name>[?&](?:api[_-]?key|key|token|access[_-]?token|password|secret)=)[^&\s'\"]+",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?P<name>Bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def redact_secrets(text: str) -> str:
    """``text`` with credentials taken out: ``user:password@`` in URLs, key/token query
    parameters and bearer tokens become ``***``. Applied to everything a run writes that a
    provider or an error may have put a URL in."""
    if "@" in text:
        text = _URL_CREDENTIALS.sub(r"\g<scheme>***@", text)
    if "=" in text:
        text = _SECRET_PARAMS.sub(r"\g<name>***", text)
    if "Bearer" in text:
        text = _BEARER.sub(r"\g<name>***", text)
    return text
