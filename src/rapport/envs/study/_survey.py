"""The questionnaires: after each session, the four dimensions MultiSessionCollab's user
study rated on a 5-point scale plus free text; a closing questionnaire at the end."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class SurveyItem(BaseModel):
    """One rated statement (1: strongly disagree ... 5: strongly agree)."""

    id: str
    dimension: str
    statement: str


SURVEY_ITEMS: tuple[SurveyItem, ...] = (
    SurveyItem(
        id="adherence",
        dimension="preference adherence",
        statement="In this session the assistant worked the way my preference card asks.",
    ),
    SurveyItem(
        id="retention",
        dimension="preference retention across sessions",
        statement="The assistant kept what I had asked for before, without my repeating it "
        "(in a part's first session: it picked up my preferences quickly once I stated them).",
    ),
    SurveyItem(
        id="impact",
        dimension="impact on the problem-solving experience",
        statement="Working with this assistant made solving the problem easier for me.",
    ),
    SurveyItem(
        id="confidence",
        dimension="confidence in future collaboration",
        statement="I would be confident working with this assistant again on a new problem.",
    ),
)
ITEM_IDS = tuple(item.id for item in SURVEY_ITEMS)
SCALE = {1: "strongly disagree", 2: "disagree", 3: "neutral", 4: "agree", 5: "strongly agree"}
MAX_FEEDBACK_CHARS = 4000


class SurveyAnswers(BaseModel):
    """A participant's answers after one session."""

    model_config = ConfigDict(extra="forbid")

    ratings: dict[str, int]
    """Item id -> 1..5, every item answered."""
    feedback: str = Field(default="", max_length=MAX_FEEDBACK_CHARS)

    @field_validator("ratings")
    @classmethod
    def _every_item(cls, ratings: dict[str, int]) -> dict[str, int]:
        if set(ratings) != set(ITEM_IDS):
            missing = sorted(set(ITEM_IDS) - set(ratings))
            raise ValueError(f"answer every statement ({', '.join(missing) or 'unknown items'})")
        if any(not 1 <= v <= 5 for v in ratings.values()):
            raise ValueError("ratings are 1 to 5")
        return ratings


class ClosingAnswers(BaseModel):
    """The closing questionnaire, once all sessions are done."""

    model_config = ConfigDict(extra="forbid")

    preferred: Literal["first", "second", "no difference"]
    """Which part's assistant the participant preferred."""
    learned: int = Field(ge=1, le=5)
    """Agreement: over the sessions, the assistant learned how I like to work."""
    comments: str = Field(default="", max_length=MAX_FEEDBACK_CHARS)


CLOSING_LEARNED = "Over the sessions, the assistant learned how I like to work."
CLOSING_PREFERRED = "Which assistant would you rather keep working with?"
