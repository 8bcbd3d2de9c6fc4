"""Chat-format helpers shared by the providers: OpenAI-shaped messages and tool-call parsing."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from ._model import stable_hash
from ._types import Message, ToolCall, ToolSpec

_TOOL_CALL_OPEN = re.compile(r"<tool_call>\s*")
_TOOL_CALL_CLOSE = re.compile(r"\s*</tool_call>")


def tool_call_id(name: str, arguments: dict[str, Any], index: int) -> str:
    """A stable id for a parsed tool call (same call, same position: same id)."""
    body = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    return "call_" + stable_hash(name, body, str(index))[:16]


def tools_payload(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs in the OpenAI ``tools`` shape (also what chat templates expect)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            },
        }
        for t in tools
    ]


def chat_messages(messages: list[Message], *, arguments_as_json: bool) -> list[dict[str, Any]]:
    """Messages as OpenAI-style dicts.

    Args:
        messages: the conversation.
        arguments_as_json: encode tool-call arguments as a JSON string (the OpenAI wire
            format) instead of a dict (what chat templates render with ``tojson``).
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": (
                            json.dumps(c.arguments, ensure_ascii=False)
                            if arguments_as_json
                            else c.arguments
                        ),
                    },
                }
                for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        if m.name is not None:
            item["name"] = m.name
        out.append(item)
    return out


def parse_arguments(raw: object) -> dict[str, Any] | None:
    """Tool-call arguments as a dict, or None when they are not a JSON object (a model may
    write any JSON value there: a list, a number, ...)."""
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    if not isinstance(raw, str):
        return None
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, strict=False)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_tool_calls(text: str, tool_names: Collection[str] = ()) -> tuple[str, list[ToolCall]]:
    """Split ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks out of text.

    Blocks are parsed with `json` only. A block that is not a valid call stays in the text,
    so the caller sees what the model wrote instead of a silently dropped call. Small models
    often drop the tags: a reply that is only such an object (or a list of them), naming one
    of `tool_names`, counts as calls too.

    Returns:
        The remaining text (stripped) and the parsed calls, in order.
    """
    if _TOOL_CALL_OPEN.search(text) is None and tool_names:
        bare = _bare_calls(text, tool_names)
        if bare:
            return "", bare
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    decoder = json.JSONDecoder(strict=False)
    while (opening := _TOOL_CALL_OPEN.search(text, pos)) is not None:
        kept.append(text[pos : opening.start()])
        call, end = _decode_call(decoder, text, opening.end(), len(calls))
        if call is None:
            kept.append(text[opening.start() : end])
        else:
            calls.append(call)
        pos = end
    kept.append(text[pos:])
    return "".join(kept).strip(), calls


def _decode_call(
    decoder: json.JSONDecoder, text: str, start: int, index: int
) -> tuple[ToolCall | None, int]:
    """Decode one call object at `start`; returns the call (or None) and where its block ends."""
    try:
        value, end = decoder.raw_decode(text, start)
    except ValueError:
        closing = _TOOL_CALL_CLOSE.search(text, start)
        return None, closing.end() if closing is not None else len(text)
    closing = _TOOL_CALL_CLOSE.match(text, end)
    block_end = closing.end() if closing is not None else end
    if not isinstance(value, dict):
        return None, block_end
    name = value.get("name")
    arguments = parse_arguments(value.get("arguments", {}))
    if not isinstance(name, str) or not name or arguments is None:
        return None, block_end
    return ToolCall(id=tool_call_id(name, arguments, index), name=name, arguments=arguments), (
        block_end
    )


def _bare_calls(text: str, tool_names: Collection[str]) -> list[ToolCall]:
    """Calls from a reply made only of JSON call objects; else [].

    The objects may be one, a list, or a run of them separated by whitespace (small models
    write one per line). Two inventions of small models are tolerated after at least one
    complete call: a made-up ``<tool_response>`` (dropped, never shown as a real result) and
    a last object cut off by the token budget (dropped: it cannot be run).
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0].strip()
    decoder = json.JSONDecoder(strict=False)
    items: list[Any] = []
    pos = 0
    while pos < len(body):
        try:
            value, pos = decoder.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            if not items or not _is_cut_or_invented(body, pos, exc):
                return []
            break
        items.extend(value if isinstance(value, list) else [value])
        pos = len(body) - len(body[pos:].lstrip())
    calls: list[ToolCall] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("name") not in tool_names:
            return []
        arguments = parse_arguments(item.get("arguments", {}))
        if arguments is None:
            return []
        name = str(item["name"])
        calls.append(
            ToolCall(id=tool_call_id(name, arguments, index), name=name, arguments=arguments)
        )
    return calls


def _is_cut_or_invented(body: str, pos: int, error: json.JSONDecodeError) -> bool:
    """Whether what follows the complete calls (from `pos`, where decoding failed with
    `error`) is an invented tool response or one object that never closed (the reply ran
    out of tokens inside it)."""
    if body.startswith("<tool_response>", pos):
        return True
    if not body.startswith("{", pos):
        return False
    return error.pos >= len(body) or "Unterminated" in error.msg
