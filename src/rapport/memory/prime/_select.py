"""Inference-time selection: candidates offered to the selection model as tools; zone prompt."""

from __future__ import annotations

import re

from rapport.llm import GenerateConfig, Message, Model, ModelError, ToolSpec

from ._experience import Experience
from ._library import ZONE_ORDER, ZONE_TITLES
from ._prompts import render

TOOL_PREFIX = "use_experience_"


def experience_tools(candidates: list[Experience]) -> list[ToolSpec]:
    """One argument-free tool per candidate; its description is the experience."""
    return [
        ToolSpec(name=f"{TOOL_PREFIX}{i}", description=f"[{e.zone}] {e.line()}"[:400])
        for i, e in enumerate(candidates)
    ]


def picked(candidates: list[Experience], names: list[str], k: int) -> list[Experience]:
    """The candidates whose tools were called, in call order, deduplicated, at most k."""
    out: list[Experience] = []
    for name in names:
        match = re.fullmatch(rf"{TOOL_PREFIX}(\d+)", name.strip())
        if match and int(match.group(1)) < len(candidates):
            e = candidates[int(match.group(1))]
            if e not in out:
                out.append(e)
    return out[:k]


async def select(
    model: Model,
    candidates: list[Experience],
    *,
    k: int,
    env: str,
    turn: int,
    horizon: int,
    stage: str,
    conversation: list[Message],
) -> tuple[list[Experience], str]:
    """Let the model pick up to k candidates by calling their tools, seeing C = (h, t, H):
    the conversation so far, the turn and the horizon (the paper's §3.3, Fig. 11).

    Returns the picks and how they were made (``model``, ``all`` when there are at most k
    candidates, ``fallback`` when the model's reply named no tool: top-k by similarity).
    """
    if len(candidates) <= k:
        return candidates, "all"
    prompt = [
        Message(
            role="user",
            content=render(
                "select",
                k=k,
                env=env,
                turn=turn + 1,
                horizon=horizon,
                stage=stage,
                conversation=transcript(conversation),
            ),
        )
    ]
    try:
        out = await model.generate(
            prompt, tools=experience_tools(candidates), config=GenerateConfig(max_tokens=120)
        )
    except ModelError:
        return candidates[:k], "fallback"
    names = [c.name for c in out.tool_calls] or re.findall(rf"{TOOL_PREFIX}\d+", out.text)
    chosen = picked(candidates, names, k)
    if not out.tool_calls and not chosen:
        return candidates[:k], "fallback"
    return chosen, "model"


def transcript(conversation: list[Message], chars: int = 1500) -> str:
    """The conversation as the selection model reads it: ``agent:`` / ``user:`` lines, the
    latest kept whole, the earliest clipped first (at most ``chars`` characters)."""
    speaker = {"assistant": "agent", "user": "user"}
    lines = [
        f"{speaker[m.role]}: {' '.join(m.content.split())}"
        for m in conversation
        if m.role in speaker
    ]
    text = "\n".join(lines)
    return text if len(text) <= chars else "..." + text[-chars:]


def zone_prompt(experiences: list[Experience], *, warning_actions: bool = False) -> str:
    """The retrieved experiences for the agent's prompt, grouped by zone.

    A warning's failed move is left out unless ``warning_actions``: on 6 function episodes
    the embedded 1.5B agent made the move a warning showed, word for word, on all 6, and on
    none with only the lesson shown.
    """
    parts = []
    for zone in ZONE_ORDER:
        group = [e for e in experiences if e.zone == zone]
        shown = warning_actions or zone != "warning"
        if group:
            lines = "\n".join(f"- {e.line(action=shown)}" for e in group)
            parts.append(f"{ZONE_TITLES[zone]}:\n{lines}")
    return "\n".join(parts)
