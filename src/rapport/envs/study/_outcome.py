"""What a study session produced, stored as a ``study`` outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rapport.log import BaseOutcome, SessionRecord


class StudyOutcome(BaseOutcome):
    """What a study session produced: the problem, the preferences, the survey."""

    kind: Literal["study"] = "study"
    study_type: str
    problem_id: str
    domain: str
    problem_kind: str
    block: int
    """The block's position in the participant's study (0: first)."""
    preferences: list[str] = Field(default_factory=list)
    ratings: dict[str, int] = Field(default_factory=dict)
    """Survey item -> 1..5 (empty: no survey, the session failed first)."""
    impact: str | None = None
    """The impact question's answer (an ``IMPACT_CHOICES`` id; None: no survey)."""
    feedback: str = ""
    """What stood out in the session (free text)."""
    own_preferences: str = ""
    """Preferences the participant added beyond the card, and how they were kept."""

    def topic(self) -> str:
        return f"{self.domain}: {self.problem_kind}"


def study_outcome(record: SessionRecord) -> StudyOutcome | None:
    """A stored session's study outcome (None for another benchmark's session)."""
    outcome = record.outcome
    return outcome if isinstance(outcome, StudyOutcome) else None
