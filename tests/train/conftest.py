"""Collab-like session records built in code: what a run store would hand to training."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rapport.envs.collab import EnforcementEvent
from rapport.log import SessionRecord, Turn

SessionFactory = Callable[..., SessionRecord]

PUSHBACK = {
    "bullet_points": "Please use bullet points, not paragraphs.",
    "max_three_sentences": "Too long. Keep it to three sentences at most.",
    "direct": "Skip the preamble and get to the point.",
    "numbered_steps": "Number the steps, please.",
}


def make_session(
    user_id: str, index: int, enforced: list[str], condition: str = "reflection"
) -> SessionRecord:
    """A session where the user pushes back once per preference id in `enforced`."""
    turns = [Turn(index=0, speaker="user", text="How do I solve 3x + 5 = 20?")]
    events = []
    for pid in enforced:
        turns.append(Turn(index=len(turns), speaker="agent", text="Great question! " * 3 + "x=5."))
        events.append(EnforcementEvent(turn=len(turns), preference_id=pid))
        turns.append(Turn(index=len(turns), speaker="user", text=PUSHBACK[pid]))
    turns.append(Turn(index=len(turns), speaker="agent", text="- Subtract 5\n- Divide by 3"))
    return SessionRecord(
        condition=condition,
        user_id=user_id,
        index=index,
        spec_id=f"p{index}",
        turns=turns,
        events=events,
    )


@pytest.fixture
def session() -> SessionFactory:
    """Build one collab-like session record."""
    return make_session
