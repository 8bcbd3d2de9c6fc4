"""The questionnaires: after each session, the survey of MultiSessionCollab's user study
(App. F, Table 5; its form as the authors' app asks it); a closing questionnaire at the
end, which is rapport's own."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class SurveyItem(BaseModel):
    """One question rated 1..5, each point with its own description (an anchored scale)."""

    id: str
    dimension: str
    question: str
    anchors: tuple[str, str, str, str, str]
    """What 1, 2, 3, 4 and 5 mean, in order."""
    first_session: int | None = None
    """The answer fixed in a block's first session (nothing to remember yet), or None."""


class ImpactChoice(BaseModel):
    """One answer to the impact question."""

    id: str
    label: str


class FreeTextItem(BaseModel):
    """An optional free-text question."""

    id: str
    question: str
    hint: str


# The post-session survey of MultiSessionCollab's user study (App. F; the authors' app,
# `full_human_study.py`, fixes its form): adherence, memory and confidence on anchored 1-5
# scales, overall satisfaction 1-5 (a Table 5 measure), impact as a choice of four, and two
# free-text questions. The wording is ours.
SURVEY_ITEMS: tuple[SurveyItem, ...] = (
    SurveyItem(
        id="adherence",
        dimension="preference adherence",
        question="How well did the assistant follow your preferences in this session?",
        anchors=(
            "It kept failing to follow them, even once I had stated them",
            "Once stated, it followed some of them and kept missing others",
            "Once stated, it followed all of them",
            "It followed some of them before I said anything",
            "It followed all of them before I said anything",
        ),
    ),
    SurveyItem(
        id="memory",
        dimension="preference memory across sessions",
        question="How well did the assistant remember your preferences from the earlier "
        "sessions of this part?",
        anchors=(
            "It remembered none of them: I had to state everything again",
            "It remembered a few: I had to state most of them again",
            "It remembered some: I had to state a few of them again",
            "It remembered most: only small details needed a reminder",
            "It remembered all of them: I repeated nothing",
        ),
        first_session=1,
    ),
    SurveyItem(
        id="confidence",
        dimension="confidence in future collaboration",
        question="How confident are you that in later sessions this assistant would keep "
        "improving and remember your preferences?",
        anchors=(
            "Not confident: I expect to repeat myself every time",
            "A little: I expect to repeat most of my preferences",
            "Somewhat: I expect to repeat some of them",
            "Confident: I expect to give a reminder now and then",
            "Very confident: I expect it to remember everything",
        ),
    ),
    SurveyItem(
        id="satisfaction",
        dimension="overall satisfaction",
        question="Overall, how satisfied are you with this session?",
        anchors=(
            "Very dissatisfied",
            "Dissatisfied",
            "Neither satisfied nor dissatisfied",
            "Satisfied",
            "Very satisfied",
        ),
    ),
)
ITEM_IDS = tuple(item.id for item in SURVEY_ITEMS)
IMPACT_QUESTION = (
    "Did the assistant follow your preferences, and how did that shape working on the "
    "problem with it?"
)
IMPACT_CHOICES: tuple[ImpactChoice, ...] = (
    ImpactChoice(id="ignored_hurt", label="It did not follow them, and that made it worse"),
    ImpactChoice(id="ignored_no_harm", label="It did not follow them, but that did no harm"),
    ImpactChoice(id="followed_no_gain", label="It followed them, but that did not help"),
    ImpactChoice(id="followed_helped", label="It followed them, and that helped"),
)
Impact = Literal["ignored_hurt", "ignored_no_harm", "followed_no_gain", "followed_helped"]
FREE_TEXT: tuple[FreeTextItem, ...] = (
    FreeTextItem(
        id="feedback",
        question="Did anything the assistant did in this session stand out to you?",
        hint="For example: it used the naming style I had asked for last time.",
    ),
    FreeTextItem(
        id="own_preferences",
        question="Did you ask for anything beyond your card? Did the assistant follow it, "
        "and did it remember it from earlier sessions?",
        hint="For example: I asked for type hints, and it kept using them.",
    ),
)
SCALE = {1: "strongly disagree", 2: "disagree", 3: "neutral", 4: "agree", 5: "strongly agree"}
"""The closing questionnaire's agreement scale."""
MAX_FEEDBACK_CHARS = 4000


class SurveyAnswers(BaseModel):
    """A participant's answers after one session."""

    model_config = ConfigDict(extra="forbid")

    ratings: dict[str, int]
    """Item id -> 1..5, every item answered."""
    impact: Impact
    """The impact question's answer (an `IMPACT_CHOICES` id)."""
    feedback: str = Field(default="", max_length=MAX_FEEDBACK_CHARS)
    """What stood out in the session (free text)."""
    own_preferences: str = Field(default="", max_length=MAX_FEEDBACK_CHARS)
    """Preferences beyond the card, and how the assistant kept them (free text)."""

    @field_validator("ratings")
    @classmethod
    def _every_item(cls, ratings: dict[str, int]) -> dict[str, int]:
        if set(ratings) != set(ITEM_IDS):
            missing = sorted(set(ITEM_IDS) - set(ratings))
            raise ValueError(f"answer every question ({', '.join(missing) or 'unknown items'})")
        if any(not 1 <= v <= 5 for v in ratings.values()):
            raise ValueError("ratings are 1 to 5")
        return ratings

    @classmethod
    def fixed_in_first_session(cls) -> dict[str, int]:
        """The items whose answer a block's first session fixes, with that answer."""
        return {i.id: i.first_session for i in SURVEY_ITEMS if i.first_session is not None}


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
