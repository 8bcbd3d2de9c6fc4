"""A loader for the official MPT file layout (a JSON list of examples), into our user plans.

Call strings such as ``FindRestaurants(city="San Jose", price_range="cheap")`` are parsed with
`ast` into a name and literal arguments; nothing is ever evaluated.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

GOLD_KEYS = ("gold_api_call", "ground_truth", "answer", "target_api_call", "label")
QUERY_KEYS = ("query", "query_dialogue", "question", "input")


class CallParseError(ValueError):
    """A call string that is not ``Name(arg=literal, ...)``."""


def parse_call(text: str) -> dict[str, Any]:
    """Parse ``Func(arg="v", n=2)`` into ``{"name": "Func", "arguments": {...}}``.

    Raises:
        CallParseError: not a single call with keyword literal arguments.
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CallParseError(f"not a call: {text!r}") from exc
    if not isinstance(node, ast.Call) or node.args:
        raise CallParseError(f"expected Name(arg=value, ...): {text!r}")
    name = _dotted(node.func)
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError(f"** arguments are not allowed: {text!r}")
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError as exc:
            raise CallParseError(f"argument '{keyword.arg}' is not a literal: {text!r}") from exc
    return {"name": name, "arguments": arguments}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise CallParseError("the called function must be a plain name")


def _calls(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value] if value else []
    return [parse_call(str(item)) for item in items]


def _dialogue(turns: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for turn in turns:
        role = "user" if str(turn.get("role", "")).lower() == "user" else "assistant"
        out.append({"role": role, "text": str(turn.get("message", turn.get("text", "")))})
    return out


def _session(index: int, raw: dict[str, Any]) -> dict[str, Any]:
    calls = _calls(raw.get("api_call", []))
    services = [s for t in raw.get("dialogue", []) for s in t.get("service", []) or []]
    return {
        "index": index,
        "domain": services[0] if services else (calls[0]["name"] if calls else "unknown"),
        "dialogue_id": raw.get("dialogue_id", ""),
        "dialogue": _dialogue(raw.get("dialogue", [])),
        "calls": calls,
        "call": calls[0] if calls else {"name": "", "arguments": {}},
        "result": "status=executed",
        "revealed": {},
        "stated": [],
        "preference_utterance": raw.get("preference_utterance", ""),
    }


def _query(example: dict[str, Any]) -> list[dict[str, str]]:
    for key in QUERY_KEYS:
        value = example.get(key)
        if isinstance(value, str) and value.strip():
            return [{"role": "user", "text": value}]
        if isinstance(value, list):
            return _dialogue(value)
        if isinstance(value, dict) and isinstance(value.get("dialogue"), list):
            return _dialogue(value["dialogue"])
    raise ValueError(f"example {example.get('example_id')!r} has no query")


def _instance(example: dict[str, Any], index: int, query: list[dict[str, str]]) -> dict[str, Any]:
    gold_raw = next((example[k] for k in GOLD_KEYS if example.get(k)), None)
    if gold_raw is None:
        raise ValueError(f"example {example.get('example_id')!r} has no gold call")
    gold = _calls(gold_raw)[0]
    stated = " ".join(t["text"] for t in query).lower()
    pref = sorted(a for a, v in gold["arguments"].items() if str(v).lower() not in stated)
    query_type = str(
        example.get("query_type", "context-guided" if len(query) > 1 else "context-free")
    )
    return {
        "id": f"{example.get('example_id', index)}-e0",
        "challenge": str(example.get("challenge", example.get("type", "unlabelled"))),
        "query_type": query_type,
        "domain": gold["name"],
        "variant": False,
        "focal_group": "",
        "dialogue": query,
        "gold": gold,
        "pref_slots": pref,
        "focal_slots": pref,
        "open_slots": [],
        "schema": {
            "name": gold["name"],
            "description": "",
            "required": [],
            "arguments": {a: {"kind": "text", "description": a} for a in gold["arguments"]},
        },
    }


def load_official(path: str | Path) -> list[dict[str, Any]]:
    """User plans from an official-format MPT file (one user per example).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a JSON list of examples, or a call string is malformed.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of examples")
    users: list[dict[str, Any]] = []
    for index, example in enumerate(data):
        history = [_session(i, s) for i, s in enumerate(example.get("sessions", []))]
        query = _query(example)
        users.append(
            {
                "id": f"mpt-{example.get('example_id', index)}",
                "prefs": {},
                "drift": None,
                "history": history,
                "instances": [_instance(example, index, query)],
            }
        )
    return users
