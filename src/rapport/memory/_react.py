"""ReAct-style prompting baseline: a reasoning-format instruction, no learning."""

from __future__ import annotations

from importlib import resources

from ._protocol import BaseMemory, SessionInfo, UserRef


def react_instruction() -> str:
    """The reasoning-format instruction (package data)."""
    path = resources.files("rapport.memory.prime").joinpath("prompts", "react.md")
    return path.read_text("utf-8").strip()


class ReActMemory(BaseMemory):
    """Asks the agent to write a "Thought:" line before each move; carries nothing over."""

    name = "react"
    roles = ()

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        return react_instruction()
