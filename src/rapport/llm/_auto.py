"""``scripted/auto``: a test double that answers any request plausibly and reproducibly.

Every choice it makes is drawn from a hash of the request, so the same request always gets
the same reply and a whole run on it repeats byte for byte. With a JSON schema it writes an
instance of the schema; with tools it sometimes calls one with arguments that fit its
parameters; otherwise it writes a short sentence taken from the conversation. It lets any
benchmark and memory run end to end at no model cost (tests, smoke runs, fuzzing the
harness); it says nothing about how a real model behaves.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

from ._model import Completion, Request, stable_hash
from ._pattern import FORMATS, matching
from ._types import ToolCall, Usage

_TRIES = 10
"""Draws of a constrained string or a unique array before giving up."""

WORDS = (
    "yes", "no", "step", "first", "answer", "list", "short", "because", "check", "value",
    "option", "please", "thanks", "done", "ask", "sure", "rule", "number", "summary", "why",
)  # fmt: skip


class _Draw(random.Random):
    """The request's random stream, and its last message (strings may copy it)."""

    def __init__(self, request: Request) -> None:
        super().__init__(stable_hash("scripted-auto", request.model_dump_json()))
        self.last = request.messages[-1].content if request.messages else ""


def auto_reply(request: Request) -> Completion:
    """A reply to ``request`` drawn from a hash of it (see the module docstring)."""
    rng = _Draw(request)
    prompt_words = sum(len(m.content.split()) for m in request.messages)
    if request.json_schema is not None:
        text = _json_text(request.json_schema, rng)
        return Completion(text=text, usage=Usage(prompt_tokens=prompt_words, completion_tokens=8))
    if request.tools and rng.random() < 0.6:
        tool = rng.choice(request.tools)
        arguments = _instance(tool.parameters, tool.parameters, rng, depth=0)
        call = ToolCall(
            id=f"call_{rng.randrange(16**6):06x}",
            name=tool.name,
            arguments=arguments if isinstance(arguments, dict) else {},
        )
        return Completion(tool_calls=[call], usage=Usage(prompt_tokens=prompt_words))
    text = _sentence(request, rng)
    return Completion(
        text=text, usage=Usage(prompt_tokens=prompt_words, completion_tokens=len(text.split()))
    )


def _json_text(schema: dict[str, Any], rng: _Draw) -> str:
    return json.dumps(_instance(schema, schema, rng, depth=0))


def _sentence(request: Request, rng: _Draw) -> str:
    """A few words, some of them from the last message (numbers included, so a draft or a
    gym move can pick them up)."""
    last = request.messages[-1].content.split() if request.messages else []
    picked = rng.sample(last, k=min(len(last), rng.randint(0, 6)))
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 10))] + picked
    rng.shuffle(words)
    return " ".join(words).strip() + "."


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target if isinstance(target, dict) else {}


def _words(rng: _Draw) -> str:
    """Words; the request's last message when a coin says so (so values the prompt states can
    survive, as a copying model's would)."""
    if rng.last and rng.random() < 0.5:
        return rng.last
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))


def _string(node: dict[str, Any], rng: _Draw) -> str:
    """A string within the node's length bounds that matches its ``pattern`` and ``format``
    (words where neither is given)."""
    low = int(node.get("minLength", 0))
    limit = node.get("maxLength")
    pattern = node.get("pattern")
    shape = FORMATS.get(str(node.get("format", "")))
    if not isinstance(pattern, str) and shape is None:
        text = _words(rng)
        text = text[: int(limit)] if isinstance(limit, int) else text
        return text + "x" * max(0, low - len(text))
    high = int(limit) if isinstance(limit, int) else None
    for _ in range(_TRIES):
        drawn = matching(shape, rng) if shape is not None else ""
        if isinstance(pattern, str) and (drawn is None or not re.search(pattern, drawn)):
            drawn = matching(pattern, rng)
        if drawn is not None and low <= len(drawn) and (high is None or len(drawn) <= high):
            return drawn
    return "x" * low


def _instance(node: Any, root: dict[str, Any], rng: _Draw, *, depth: int) -> Any:
    """An instance of a JSON-schema node (the subset pydantic and tool specs use)."""
    if not isinstance(node, dict) or depth > 8:
        return None
    node = _resolve(node, root)
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return rng.choice(node["enum"])
    for key in ("anyOf", "oneOf"):
        options = [o for o in node.get(key, []) if _resolve(o, root).get("type") != "null"]
        if options:
            return _instance(rng.choice(options), root, rng, depth=depth + 1)
    if node.get("allOf"):
        return _instance(node["allOf"][0], root, rng, depth=depth + 1)
    kind = node.get("type", "object" if "properties" in node else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return _typed(kind, node, root, rng, depth)


def _typed(kind: str, node: dict[str, Any], root: dict[str, Any], rng: _Draw, depth: int) -> Any:
    if kind == "object":
        properties = node.get("properties", {})
        return {k: _instance(v, root, rng, depth=depth + 1) for k, v in properties.items()}
    if kind == "array":
        return _array(node, root, rng, depth)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        return _number(kind, node, rng)
    if kind == "null":
        return None
    return _string(node, rng)


def _array(node: dict[str, Any], root: dict[str, Any], rng: _Draw, depth: int) -> list[Any]:
    """Items for ``prefixItems`` first, then ``items``, between ``minItems`` and ``maxItems``
    (at most 3 unless more are required), distinct where ``uniqueItems`` says so."""
    fixed = [_instance(n, root, rng, depth=depth + 1) for n in node.get("prefixItems", [])]
    if fixed and node.get("items") is False:
        return fixed
    low = max(0, int(node.get("minItems", 0)) - len(fixed))
    high = max(low, min(int(node.get("maxItems", 3)) - len(fixed), 3))
    count = rng.randint(max(low, min(1, high)), high)
    items: list[Any] = []
    for _ in range(count * _TRIES):
        if len(items) == count:
            break
        item = _instance(node.get("items", {}), root, rng, depth=depth + 1)
        if not node.get("uniqueItems") or item not in fixed + items:
            items.append(item)
    return fixed + items


def _number(kind: str, node: dict[str, Any], rng: _Draw) -> int | float:
    """A number within ``minimum``/``maximum`` (or the exclusive bounds), a multiple of
    ``multipleOf`` where given; an integer where one fits, as a float for ``number``."""
    low, high = _bounds(node)
    step = node.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        first, last = math.ceil(low / step), math.floor(high / step)
        if first <= last:
            value = rng.randint(first, last) * step
            return int(value) if kind == "integer" else float(value)
    first, last = math.ceil(low), math.floor(high)
    if first <= last:
        whole = rng.randint(first, last)
        return whole if kind == "integer" else float(whole)
    return rng.uniform(low, high)  # a range of fractions with no whole number in it


def _bounds(node: dict[str, Any]) -> tuple[float, float]:
    """The closed range a number may take (exclusive bounds moved inwards by the least step)."""
    low = node.get("minimum")
    high = node.get("maximum")
    above = node.get("exclusiveMinimum")
    below = node.get("exclusiveMaximum")
    if isinstance(above, int | float) and not isinstance(above, bool):
        above = math.nextafter(above, math.inf)
        low = above if low is None else max(low, above)
    if isinstance(below, int | float) and not isinstance(below, bool):
        below = math.nextafter(below, -math.inf)
        high = below if high is None else min(high, below)
    if low is None:
        low = 0 if high is None or high >= 0 else high - 10
    if high is None:
        high = low + 10
    return float(low), float(high)
