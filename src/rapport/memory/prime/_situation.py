"""The compact situation text retrieval compares: the same form for a live turn and a lesson.

A live query and a stored experience are both written by code as
``"<env>, <stage> stage. Known so far: <move> -> <reply> | ... Latest: <reply>"``, so a
sentence embedder compares like with like (an experience's model-written prose is not
embedded). The task's opening is left out on purpose: it is nearly the same for every
episode of an environment and would make every experience of that environment look alike.
"""

from __future__ import annotations

from rapport.agents import parse_action
from rapport.llm import Message

EXCHANGES = 3
"""How many of the latest exchanges the situation keeps."""
_CLIP = 70


def _clip(text: str, n: int = _CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def move_gist(message: str) -> str:
    """An agent message reduced to its move (as the gyms read it), or ``(no valid move)``."""
    action = parse_action(message)
    if action.kind == "invalid":
        return "(no valid move)"
    text = action.text.split("\n", 1)[0].strip()
    if action.kind == "action":
        return _clip(text) or "[action]"
    return _clip(f"[{action.kind}] {text}".strip())


def compact_situation(env: str, stage: str, exchanges: list[tuple[str, str]]) -> str:
    """The situation in retrieval's form from (agent message, reply) pairs so far.

    Args:
        env: the environment's name.
        stage: ``exploration``, ``verification`` or ``completion``.
        exchanges: every (agent message, environment reply) pair before this turn.
    """
    head = f"{env}, {stage} stage."
    if not exchanges:
        return f"{head} Known so far: nothing yet."
    recent = exchanges[-EXCHANGES:]
    known = " | ".join(
        f"{move_gist(move)} -> {_clip(reply, 50).rstrip('.')}" for move, reply in recent
    )
    return f"{head} Known so far: {known}. Latest: {_clip(recent[-1][1], 50)}"


def exchanges_of(conversation: list[Message]) -> list[tuple[str, str]]:
    """(agent message, following reply) pairs of a conversation that opens with the task."""
    pairs = []
    for i, message in enumerate(conversation):
        if message.role == "assistant":
            reply = next(
                (m.content for m in conversation[i + 1 :] if m.role == "user"),
                "",
            )
            pairs.append((message.content, reply))
    return pairs


def situation_text(conversation: list[Message], env: str = "", stage: str = "") -> str:
    """What a live turn's retrieval compares against (see `compact_situation`).

    Args:
        conversation: the episode so far (its first message is the task).
        env: the environment's name.
        stage: the current stage.
    """
    if not conversation:
        return ""
    return compact_situation(env or "task", stage or "current", exchanges_of(conversation))
