"""The agent's instructions under the two conditions: ``no_p`` and ``p``."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from ._history import histories
from ._settings import Setting

GENERIC = "Use the interaction tools as you judge best."


def agent_instructions(condition: str, settings: Sequence[Setting]) -> str:
    """The agent's system prompt for a condition (``no_p``: generic; ``p``: with the
    person's earlier interactions, one multi-turn history per preference they hold)."""
    template = resources.files(__package__).joinpath("agent_prompt.md").read_text("utf-8")
    if condition == "no_p":
        return template.format(guidance=GENERIC)
    guidance = (
        "Here are earlier sessions with this same person, with how they reacted:\n\n"
        f"{histories(settings)}\n\n"
        "Infer from their reactions how they like an assistant to interact (when to notify, "
        "explain, show values, ask, confirm, report or stay quiet) and use the interaction "
        "tools accordingly."
    )
    return template.format(guidance=guidance)
