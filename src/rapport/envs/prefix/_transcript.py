"""A session rendered for the judges: numbered turns, the task, the expected pattern."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rapport.log import Turn

from ._settings import Setting

JUDGE_WINDOW = 12000
"""The characters of transcript the judges read when the whole log is past a judge's
context: the first turns and as many of the last as fit."""

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


def _line(turn: Turn, cut: bool = True) -> str:
    """A turn on one line; ``cut`` shortens call arguments and tool results (a window)."""
    text = turn.text.strip()
    if turn.tool_calls:
        calls = ", ".join(
            f"{c.name}({json.dumps(c.arguments)[: 200 if cut else None]})" for c in turn.tool_calls
        )
        text = f"{text} [calls: {calls}]".strip()
    if turn.speaker == "tool" and cut:
        text = text[:300]
    return f"[{turn.index}] {turn.speaker}: {text}"


def _visible(turns: Sequence[Turn], max_chars: int | None) -> list[Turn | None]:
    """The turns that fit the budget (None: all): the first few and as many of the last as
    fit; None marks the gap between them."""
    if max_chars is None:
        return list(turns)
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
    turns: Sequence[Turn],
    settings: Sequence[Setting],
    instruction: str,
    *,
    max_chars: int | None = None,
) -> tuple[str, set[int]]:
    """What the judges read (the task, the preferences with their patterns, the turns: all
    of them, whole, or those that fit ``max_chars``), and the numbers of the turns shown
    (the ones they may cite)."""
    visible = _visible(turns, max_chars)
    cut = max_chars is not None
    body = "\n".join(_line(t, cut) if t else "[... turns omitted ...]" for t in visible)
    prefs = "\n".join(
        f"- {s.definition} Expected interaction pattern: {expected_pattern(s)}" for s in settings
    )
    text = (
        f"## The person's task\n{instruction}\n\n"
        f"## The person's interaction preferences\n{prefs}\n\n"
        f"## Session transcript\n{body or '(no turns)'}"
    )
    return text, {t.index for t in visible if t is not None}
