"""Where code decides for the user simulator: preference verdicts, enforcement, stopping.

The user model reasons about each preference in structured output; these rules turn that
reasoning into the decisions that are measured. A deterministic checker, where one exists,
overrides the model's verdict; nothing is enforced while the agent is only asking
clarifying questions; an enforcing turn neither updates the draft nor stops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from pydantic import BaseModel, Field

from ._checkers import check_preference, is_clarifying_question
from ._taxonomy import Preference
from ._types import PreferenceVerdictEvent

COLLAB_END_TOKEN = "[[DONE]]"
"""What the user writes to end the session (the `stop` flag does the same)."""


class PreferenceJudgement(BaseModel):
    """The user model's verdict on one preference for the agent's latest message."""

    preference_id: str = Field(max_length=40)
    satisfied: bool
    reason: str = Field(default="", max_length=100)


class UserReaction(BaseModel):
    """The user model's structured reasoning on one agent message (the order is the order
    it reasons in)."""

    preferences: list[PreferenceJudgement] = Field(default_factory=list, max_length=3)
    enforce: bool = False
    update_draft: bool = False
    draft: str = Field(default="", max_length=300)
    stop: bool = False
    message: str = Field(default="", max_length=500)


@dataclass
class PreferenceDecision:
    """What code decided about the preferences for one agent message."""

    clarifying: bool
    """The agent message only asked clarifying questions (nothing is enforced)."""
    verdicts: list[PreferenceVerdictEvent] = field(default_factory=list)
    violated: list[Preference] = field(default_factory=list)
    """The preferences to enforce, in the user's order."""


def decide_preferences(
    reaction: UserReaction,
    preferences: list[Preference],
    agent_text: str,
    *,
    turn: int,
    use_checkers: bool = True,
) -> PreferenceDecision:
    """Combine the model's verdicts with the deterministic checkers, one verdict each.

    A preference the model did not judge counts as satisfied in the model's eyes. Without
    `use_checkers` the model's verdict stands and the checker's is only recorded.
    """
    clarifying = is_clarifying_question(agent_text)
    decision = PreferenceDecision(clarifying=clarifying)
    for position, pref in enumerate(preferences):
        model_ok = _model_verdict(reaction, pref.id, position)
        checker_ok = check_preference(pref.id, agent_text)
        satisfied = checker_ok if checker_ok is not None and use_checkers else model_ok
        enforced = not satisfied and not clarifying
        if enforced:
            decision.violated.append(pref)
        decision.verdicts.append(
            PreferenceVerdictEvent(
                turn=turn,
                preference_id=pref.id,
                model_satisfied=model_ok,
                checker_satisfied=checker_ok,
                enforced=enforced,
            )
        )
    return decision


def _model_verdict(reaction: UserReaction, pref_id: str, position: int) -> bool:
    by_id = {j.preference_id.strip(): j.satisfied for j in reaction.preferences}
    if pref_id in by_id:
        return by_id[pref_id]
    # Small models sometimes garble the id; fall back on the position they were listed in.
    if position < len(reaction.preferences):
        return reaction.preferences[position].satisfied
    return True


@cache
def prompt(name: str) -> str:
    """A packaged prompt template of the user simulator (``opening``, ``react``, ``enforce``)."""
    return resources.files(__package__).joinpath(f"prompts/{name}.md").read_text()


def enforcement_message(violated: list[Preference]) -> str:
    """The enforcing reply: a request to redo, then each violated preference stated
    concretely. Code writes it, so the agent always learns exactly what was wrong (small
    user models tend to ramble or slip out of role here)."""
    item = prompt("enforce_item").strip()
    stated = [item.format(name=p.name, criterion=_first_person(p.enforcement)) for p in violated]
    return "\n".join([prompt("enforce").strip(), *stated])


def _first_person(criterion: str) -> str:
    """A criterion written for the simulator ("addressed to you"), as the user says it."""
    text = " ".join(criterion.split())
    return re.sub(r"\byour\b", "my", re.sub(r"\byou\b", "me", text))


def clean_message(text: str) -> str:
    """The user's message without the end token."""
    return text.replace(COLLAB_END_TOKEN, "").strip()


def wants_to_stop(reaction: UserReaction) -> bool:
    """Whether the model asked to end the session (the flag or the end token)."""
    return reaction.stop or COLLAB_END_TOKEN in reaction.message
