"""A session as plain text: the turns and executed calls of its record. Memories keep it
(``full_history``) and benchmarks count it (MPT's full-history token reference), so it lives
below both."""

from __future__ import annotations

import json
from typing import Any

from ._records import SessionRecord


def format_call(name: str, arguments: dict[str, Any]) -> str:
    """A call as ``Name(arg="v", n=2)`` (JSON literals for the values)."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{name}({args})"


def render_session(record: SessionRecord) -> str:
    """One session as plain text: a heading, the turns and the executed calls."""
    domain = record.outcome.topic()
    lines = [f"## Session {record.index + 1}" + (f" ({domain})" if domain else "")]
    for turn in record.turns:
        if turn.tool_calls:
            lines += [f"call: {format_call(c.name, c.arguments)}" for c in turn.tool_calls]
        elif turn.speaker == "tool":
            lines.append(f"result: {turn.text}")
        elif turn.text:
            lines.append(f"{turn.speaker}: {turn.text}")
    return "\n".join(lines)


def render_sessions(records: list[SessionRecord]) -> str:
    """Sessions as plain text, in order, separated by blank lines."""
    return "\n\n".join(render_session(r) for r in records)
