"""The agent's instructions under the two conditions: ``no_p`` and ``p``."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from ._settings import Setting

GENERIC = "Use the interaction tools as you judge best."

SAMPLE_REQUEST = "Could you tidy up my notes folder and tell me when it's done?"


def sample_interaction(settings: Sequence[Setting]) -> str:
    """An earlier short interaction with this user, ending in their implicit feedback."""
    feedback = " ".join(s.feedback for s in settings)
    return (
        f"Person: {SAMPLE_REQUEST}\n"
        "Assistant: (ran the tools needed and finished the request)\n"
        "Assistant: All done.\n"
        f"Person: {feedback}"
    )


def agent_instructions(condition: str, settings: Sequence[Setting]) -> str:
    """The agent's system prompt for a condition (``no_p``: generic; ``p``: with a sample)."""
    template = resources.files(__package__).joinpath("agent_prompt.md").read_text("utf-8")
    if condition == "no_p":
        return template.format(guidance=GENERIC)
    guidance = (
        "Here is an earlier interaction with this same person, with how they reacted:\n\n"
        f"{sample_interaction(settings)}\n\n"
        "Infer from their reaction how they like an assistant to interact (when to notify, "
        "explain, ask, confirm or stay quiet) and use the interaction tools accordingly."
    )
    return template.format(guidance=guidance)
