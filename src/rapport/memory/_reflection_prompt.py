"""The reflection memory's prompt: the session as numbered lines and the messages that ask
the memory model to reflect on it (package data under ``rapport/memory/prompts``)."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Literal

from rapport.llm import Message
from rapport.log import SessionRecord

from ._msc_notes import fill
from ._protocol import pushbacks

DEFAULT_MAX_NOTES = 12
Layout = Literal["json", "tags"]


@functools.cache
def prompt_template(name: str) -> str:
    """A prompt file from ``rapport/memory/prompts`` (package data)."""
    return (resources.files("rapport.memory") / "prompts" / name).read_text(encoding="utf-8")


def render(name: str, **values: object) -> str:
    """Fill a prompt's ``{placeholders}`` in one pass (braces in the values stay as they are)."""
    return fill(prompt_template(name), values)


def clip(text: str, limit: int) -> str:
    """`text` stripped, cut to `limit` characters (marked ``[...]``)."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " [...]"


def format_transcript(
    record: SessionRecord, max_turn_chars: int = 1500, *, pushback: bool = False
) -> str:
    """A session as numbered lines for the reflection prompt. System turns are left out.

    With `pushback`, user turns where the user enforced a preference are marked
    ``PUSHBACK`` and the agent reply an enforcement event points at is marked as objected
    to: a cleaner signal than the paper's reflector gets, which must work out for itself
    which user messages were complaints.
    """
    enforced = {e.turn for e in pushbacks(record) if e.turn is not None} if pushback else set()
    lines = []
    for turn in record.turns:
        if turn.speaker == "system":
            continue
        text = clip(turn.text, max_turn_chars if turn.speaker != "tool" else 300)
        if turn.speaker == "user":
            label = "USER (PUSHBACK)" if turn.index in enforced else "USER"
        elif turn.speaker == "agent":
            label = "ASSISTANT (objected to)" if turn.index in enforced else "ASSISTANT"
            calls = ", ".join(f"{c.name}({c.arguments})" for c in turn.tool_calls)
            text = f"{text} [calls: {calls}]".strip() if calls else text
        else:
            label = "TOOL"
        lines.append(f"[turn {turn.index}] {label}: {text}")
    return "\n".join(lines) if lines else "(empty conversation)"


_PUSHBACK_NOTE = (
    "; turns marked PUSHBACK are where the person asked the assistant to change how it replies"
)


def reflection_messages(
    transcript: str,
    prior_notes: list[str],
    max_notes: int = DEFAULT_MAX_NOTES,
    layout: Layout = "tags",
    *,
    pushback: bool = False,
) -> list[Message]:
    """The chat messages asking the memory model to reflect on a session and rewrite the notes.

    Args:
        transcript: the session, as `format_transcript` writes it.
        prior_notes: the user's notes before this session.
        max_notes: the most notes the model may keep.
        layout: ``tags`` (the trained reflector's format) or ``json`` (structured output).
        pushback: the transcript marks enforcing turns (the prompt then says so).
    """
    notes = "\n".join(f"- {n}" for n in prior_notes) if prior_notes else "(none yet)"
    answer = prompt_template(f"reflection_layout_{layout}.md").strip()
    system = render("reflection_system.md", max_notes=max_notes, layout=answer)
    return [
        Message(role="system", content=system),
        Message(
            role="user",
            content=render(
                "reflection_user.md",
                prior_notes=notes,
                transcript=transcript,
                marks=_PUSHBACK_NOTE if pushback else "",
            ),
        ),
    ]
