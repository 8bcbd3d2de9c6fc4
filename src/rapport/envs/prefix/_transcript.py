"""A session rendered for the judges: numbered turns, the task, the expected pattern."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rapport.log import Turn

from ._settings import Setting

_WHEN = {
    "before_call": "before each system call",
    "before_write": "before each call that changes something",
    "before_first_write": "once, before the first call that changes something",
    "before_first_call": "once, before any system call",
    "after_call": "after each system call",
    "after_read": "after each call that looks something up",
    "after_failure": "after each failed call",
    "before_retry": "before retrying a failed call",
    "after_parallel": "after each group of calls run together in one step",
    "after_first_call": "as the work goes, after it has started",
    "at_end": "once the work is done",
    "never": "never",
}


def expected_pattern(setting: Setting) -> str:
    """The setting's expected interaction pattern in words."""
    return "; ".join(f"{rule.tool}: {_WHEN[rule.when]}" for rule in setting.pattern)


def _line(turn: Turn) -> str:
    text = turn.text.strip()
    if turn.tool_calls:
        calls = ", ".join(f"{c.name}({json.dumps(c.arguments)[:200]})" for c in turn.tool_calls)
        text = f"{text} [calls: {calls}]".strip()
    if turn.speaker == "tool":
        text = text[:300]
    return f"[{turn.index}] {turn.speaker}: {text}"


def _visible(turns: Sequence[Turn], max_chars: int) -> list[Turn | None]:
    """The turns that fit the budget: the first few and as many of the last as fit; None
    marks the gap between them."""
    lines = [len(_line(t)) + 1 for t in turns]
    if sum(lines) <= max_chars:
        return list(turns)
    head = min(4, len(turns))
    budget = max_chars - sum(lines[:head])
    tail: list[Turn] = []
    for turn, size in zip(reversed(turns[head:]), reversed(lines[head:]), strict=True):
        if size > budget:
            break
        tail.insert(0, turn)
        budget -= size
    return [*turns[:head], None, *tail]


def render_for_judge(
    turns: Sequence[Turn], settings: Sequence[Setting], instruction: str, *, max_chars: int = 12000
) -> tuple[str, set[int]]:
    """What the judges read (the task, the preferences with their patterns, the turns that
    fit ``max_chars``), and the numbers of the turns shown (the ones they may cite)."""
    visible = _visible(turns, max_chars)
    body = "\n".join(_line(t) if t else "[... turns omitted ...]" for t in visible)
    prefs = "\n".join(
        f"- {s.definition} Expected interaction pattern: {expected_pattern(s)}" for s in settings
    )
    text = (
        f"## The person's task\n{instruction}\n\n"
        f"## The person's interaction preferences\n{prefs}\n\n"
        f"## Session transcript\n{body or '(no turns)'}"
    )
    return text, {t.index for t in visible if t is not None}
