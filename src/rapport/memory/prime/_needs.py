"""What PRIME needs of a benchmark's sessions, as protocols of its own.

PRIME learns from episodes with a final score and per-turn rewards (`RewardEvent`s on the
record). A benchmark whose outcome implements `RewardedEpisode` can be run with PRIME; the
runner refuses one whose outcomes do not.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

HORIZON = 16
"""The turn budget assumed when a session does not say its own."""


class EpisodeSummary(BaseModel):
    """What PRIME reads of one finished episode."""

    env: str
    """The environment's name (experiences are kept and retrieved per environment)."""
    score: float
    """The episode's reward in [0, 1] (the trajectory reward)."""
    success: bool
    horizon: int = HORIZON
    hidden: dict[str, Any] | None = None
    """What the episode kept hidden from the agent (shown to the distiller on request)."""
    secrets: list[str] = Field(default_factory=list)
    """Names that would give the episode's answer away (a lesson must not name them)."""
    rules: str = ""
    """The environment's instructions as the agent saw them."""
    talks: bool = True
    """Whether someone answers questions in words."""
    moves: list[str] = Field(default_factory=list)
    """An example message per move the environment takes."""


@runtime_checkable
class RewardedEpisode(Protocol):
    """A session outcome PRIME can learn from."""

    def episode_summary(self) -> EpisodeSummary:
        """The episode as PRIME reads it."""
        ...
